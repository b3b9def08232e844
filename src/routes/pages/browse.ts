import type { App } from '../../http/types.js'

export default async function browsePages(_app: App): Promise<void> {}
