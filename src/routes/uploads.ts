import type { App } from '../http/types.js'

export default async function uploadsRoutes(_app: App): Promise<void> {}
