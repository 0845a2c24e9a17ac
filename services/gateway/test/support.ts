export {
  call,
  freePort,
  listenForEvents,
  makeKeyPair,
  signTestToken,
  testEnv,
  testServers,
  uniqueName,
  type JsonResponse,
  type KeyPair,
  waitFor,
} from '@mkt/infra';
