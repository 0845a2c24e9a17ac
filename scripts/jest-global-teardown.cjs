module.exports = async function globalTeardown() {
  await globalThis.__MKT_INFRA__?.stop();
};
