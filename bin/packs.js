#!/usr/bin/env node
// `npx packs …`: the admin CLI. Runs the TypeScript source through tsx, as `npm start` does.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli.ts')
