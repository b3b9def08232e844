// The 'gate' plugin: the site-wide gate (./gate.ts) as `app.gate`, and the
// password hasher at the configured cost (PACKS_PASSWORD_HASH_COST) as
// `app.passwords`, which the gate and the account services share. On a first
// start without PACKS_MASTER_PASSWORD it generates the gate password and keeps
// it in `app.generatedMasterPassword`, so the entry point prints it once.
import fp from 'fastify-plugin'
import { Gate } from './gate.js'
import { PasswordHasher } from './passwords.js'

declare module 'fastify' {
  interface FastifyInstance {
    gate: Gate
    /** Password hashing at the configured cost (PACKS_PASSWORD_HASH_COST); the gate and the account services share it. */
    passwords: PasswordHasher
    /** Set when this start generated the gate password, so the entry point can print it once. */
    generatedMasterPassword: string | null
  }
}

export default fp(async (app) => {
  const passwords = new PasswordHasher(app.config.passwordHashCost)
  app.decorate('passwords', passwords)
  const gate = await Gate.open(app.db, app.config.masterPassword, passwords)
  app.decorate('generatedMasterPassword', await gate.ensurePassword())
  app.decorate('gate', gate)
}, { name: 'gate', dependencies: ['db'], decorators: { fastify: ['config'] } })
