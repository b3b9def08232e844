import type { App } from '../../http/types.js'

export default async function accountsPages(_app: App): Promise<void> {}
