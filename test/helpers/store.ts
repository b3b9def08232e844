// The file store of the backend combination a test runs on, on its own (no app
// around it), for test/backends: a fresh directory on the local disk, or with
// PACKS_TEST_STORAGE=s3 a fresh bucket on the local S3 server (./s3.ts), under
// a prefix so keys not at the bucket's root are covered too.
import fs from 'node:fs'
import path from 'node:path'
import type { FileStore } from '../../src/storage/index.js'
import { openFileStore } from '../../src/storage/index.js'
import { bucketContents, s3Bucket, s3Selected } from './s3.js'
import { tempDir } from './temp.js'

export interface TestStore {
  /** Which store this is, for test names. */
  name: string
  store: FileStore
  /**
   * Everything the store holds, sorted: the keys of its objects and of its
   * unfinished writes (a `.partial` file's name on disk, `pending-upload:<key>`
   * on S3), so a test sees what a failed write left behind.
   */
  contents(): Promise<string[]>
  /** Closes the store and removes what it held. */
  cleanup(): Promise<void>
}

/** The name of the combination's store, before one is opened (for describe()). */
export const testStoreName = s3Selected() ? 'S3 (s3rver)' : 'local disk'

export async function openTestStore(): Promise<TestStore> {
  if (s3Selected()) {
    const bucket = await s3Bucket()
    const prefix = 'site-a/'
    const store = await openFileStore(`${bucket.storageUrl}&prefix=${prefix}`)
    await store.check?.()
    const client = bucket.client()
    return {
      name: testStoreName,
      store,
      async contents() {
        return (await bucketContents(client, bucket.bucket)).map((key) => key.replace(prefix, ''))
      },
      async cleanup() {
        await store.close()
        client.destroy()
      },
    }
  }
  const dir = tempDir('packs-store-')
  const store = await openFileStore(`file:${dir}`)
  return {
    name: testStoreName,
    store,
    async contents() {
      return (fs.readdirSync(dir, { recursive: true }) as string[])
        .filter((p) => fs.statSync(path.join(dir, p)).isFile())
        .map((p) => path.basename(p))
        .sort()
    },
    async cleanup() {
      await store.close()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
