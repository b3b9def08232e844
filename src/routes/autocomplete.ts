import type { App } from '../http/types.js'

export default async function autocompleteRoutes(_app: App): Promise<void> {}
