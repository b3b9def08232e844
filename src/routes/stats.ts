import type { App } from '../http/types.js'

export default async function statsRoutes(_app: App): Promise<void> {}
