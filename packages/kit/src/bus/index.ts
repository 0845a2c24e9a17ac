export * from './bus';
export * from './consumer';
export * from './outbox';
export * from './topology';
export * from './publishers';
export * from './deletions';
