import type { App } from '../../http/types.js'

export default async function tokensPages(_app: App): Promise<void> {}
