import type { App } from '../../http/types.js'

export default async function statsPages(_app: App): Promise<void> {}
