import type { App } from '../http/types.js'

export default async function filesRoutes(_app: App): Promise<void> {}
