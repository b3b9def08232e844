// The app's Fastify instance type, with TypeBox as its type provider. What the app adds to Fastify's types is
// declared next to whatever adds it: each plugin its decorations (src/db/plugin.ts, src/auth/plugin.ts, …),
// src/app.ts the settings and the clock.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>
