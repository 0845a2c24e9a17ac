export * from './envelope';
export * from './pagination';
export * from './error-codes';
export * from './references';
export * from './money';
export * from './events';
export * from './auth';
export * from './wallet';
