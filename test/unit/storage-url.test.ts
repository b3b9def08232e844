// Parsing STORAGE_URL for the S3 store: no store is opened. The stores
// themselves are test/backends/storage.test.ts.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError } from '../../src/config/index.js'
import { openFileStore } from '../../src/storage/index.js'
import { parseS3Url } from '../../src/storage/s3.js'

describe('S3 STORAGE_URL', () => {
  it('reads bucket, endpoint, region, path style and prefix', () => {
    assert.deepEqual(parseS3Url('s3://my-bucket?endpoint=http://127.0.0.1:9000&region=eu-west-3&prefix=/packs', {}), {
      bucket: 'my-bucket', prefix: 'packs/', region: 'eu-west-3', endpoint: 'http://127.0.0.1:9000', pathStyle: true,
    })
    assert.deepEqual(parseS3Url('s3://my.bucket', { AWS_REGION: 'us-west-2' }), {
      bucket: 'my.bucket', prefix: '', region: 'us-west-2', endpoint: undefined, pathStyle: false,
    })
    assert.equal(parseS3Url('s3://b12?endpoint=https://s3.example.com&path_style=false', {}).pathStyle, false)
    assert.equal(parseS3Url('s3://b12?path_style=true', {}).pathStyle, true)
    assert.equal(parseS3Url('s3://b12', {}).region, 'us-east-1')
  })

  it('refuses malformed URLs with a ConfigError', async () => {
    for (const [url, message] of [
      ['s3://', /must name a bucket/],
      ['s3://?endpoint=http://x', /must name a bucket/],
      ['s3://Upper_Case', /must name a bucket/],
      ['s3://ab', /must name a bucket/],
      ['s3://bucket1/some/path', /options as query parameters/],
      ['s3://key:secret@bucket1', /options as query parameters/],
      ['s3://bucket1?endpoint=not-a-url', /endpoint "not-a-url" must be an http/],
      ['s3://bucket1?endpoint=ftp://host', /endpoint "ftp:\/\/host" must be an http/],
      ['s3://bucket1?path_style=yes', /path_style must be true or false/],
      ['s3://bucket1?endpiont=http://x', /unknown parameter "endpiont"/],
    ] as const) {
      await assert.rejects(openFileStore(url), (error: Error) => error instanceof ConfigError && message.test(error.message), url)
    }
  })
})
