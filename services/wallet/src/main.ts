import { startService } from '@mkt/kit';
import { walletService } from './composition';
import { loadConfig } from './config';
import { createWalletLogger } from './logger';

const config = loadConfig();
startService(walletService(config, createWalletLogger(config.LOG_LEVEL)).options);
