import type { App } from '../http/types.js'

export default async function packsRoutes(_app: App): Promise<void> {}
