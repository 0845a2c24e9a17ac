import { createLogger, startService } from '@mkt/kit';
import { createApp } from './app';
import { loadConfig } from './config';
import { Product } from './db/product.model';
import { Shop, V1Product } from './db/shop.model';

const config = loadConfig();
const log = createLogger('catalog', config.LOG_LEVEL);

startService({
  name: 'catalog',
  config,
  log,
  models: [Product, Shop, V1Product],
  createApp: (runtime) => createApp({ config, runtime }),
});
