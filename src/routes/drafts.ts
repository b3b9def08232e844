import type { App } from '../http/types.js'

export default async function draftsRoutes(_app: App): Promise<void> {}
