export {
  call,
  freePort,
  listenOnFreePort,
  makeKeyPair,
  signTestToken,
  testServers,
  uniqueName,
  type JsonResponse,
  type KeyPair,
} from '@mkt/infra';
