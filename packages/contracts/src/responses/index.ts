export { PaginationResponse } from './common';
export * from './auth';
export * from './wallet';
export * from './catalog';
export * from './crm';
export * from './consultation';
export * from './review';
