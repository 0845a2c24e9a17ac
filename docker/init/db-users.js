/* global db, print */
// Compose's init step for MongoDB (the `db-users` service, mongosh in the mongo image, as the
// root user): a user per service with readWrite on its own database only, named after the
// service, with the password of MONGO_PASSWORD_<SERVICE>. Run on every `up`: creates a missing
// user, else sets its password and roles again.
for (const service of ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review']) {
  const pwd = process.env[`MONGO_PASSWORD_${service.toUpperCase()}`];
  if (!pwd) throw new Error(`MONGO_PASSWORD_${service.toUpperCase()} is not set: run node scripts/run.mjs env > .env`);
  const own = db.getSiblingDB(service);
  const roles = [{ role: 'readWrite', db: service }];
  if (own.getUser(service)) own.updateUser(service, { pwd, roles });
  else own.createUser({ user: service, pwd, roles });
  print(`db-users: ${service} may read and write the database ${service} only`);
}
