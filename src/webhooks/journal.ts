// The delivery journal, by job: records.ts (what a line holds, the summary of deliveries), files.ts
// (where the files are, reading them, one line appended beside a listener), log.ts (the listener's
// group-committed writer, its rotation and recovered state).
export * from './journal/records.js';
export * from './journal/files.js';
export * from './journal/log.js';
