import type { App } from '../../http/types.js'

export default async function createPages(_app: App): Promise<void> {}
