#!/usr/bin/env node
// `npx packs …`: the admin CLI. Runs the TypeScript source through tsx, as `npm start` does.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../src/cli.ts')
process.exitCode = await main(process.argv.slice(2))
