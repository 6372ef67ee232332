// The protocol's file operations live on the ground floor (src/internal/atomic.ts),
// so that src/internal/ (the leftover registry) uses the same ones.
export * from '../internal/atomic.js';
