// The fast suite's env (vitest.config.ts, project "shimkit"). NODE_EXTRA_CA_CERTS
// makes every Node start read a CA bundle (30 ms here, where it names the
// system's), and this suite starts hundreds of Node processes (each `shimkit`
// command, fixtures, jest) that make no TLS connection. The stress suite keeps
// it: it runs npm against the registry.
delete process.env.NODE_EXTRA_CA_CERTS;
