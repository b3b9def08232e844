import type { App } from '../../http/types.js'

export default async function packPages(_app: App): Promise<void> {}
