export * from './dist/domain';
