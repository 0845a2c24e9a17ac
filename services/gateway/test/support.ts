export { call, freePort, makeKeyPair, signTestToken, testServers, uniqueName, type JsonResponse, type KeyPair } from '@mkt/infra';
