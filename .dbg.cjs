const fs=require('fs');const L=[];const log=(...a)=>{L.push(a.map(x=>typeof x==='string'?x:JSON.stringify(x)).join(' '));fs.writeFileSync('Z:\\repo\\.dbg.txt',L.join('\n'))};
process.on('warning', w=>log('WARNING', w.code, w.message));
(async()=>{
try{
const s=require('Z:\\repo\\dist\\index.cjs');
const p=s.spawnProcess(process.execPath,['-e','setInterval(()=>{},1000)']);
await new Promise(r=>setTimeout(r,500));
log('running', p.running, p.pid);
process.env.SystemRoot='C:\\nowhere';
const t0=Date.now();
const e=await p.close();
log('closed', e, Date.now()-t0, p.running);
}catch(e){log('ERR',e.stack)}
await new Promise(r=>setTimeout(r,200));
})();
