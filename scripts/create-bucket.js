#!/usr/bin/env node
// Creates the bucket that STORAGE_URL names, with the credentials the servers
// use (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from the environment), so an
// operator needs neither the AWS CLI nor a provider's console
// (docs/deploy.md, step 2; scripts/deploy-rehearsal.sh runs it against s3rver):
//   set -a; . /etc/packs/env; set +a; node scripts/create-bucket.js
// A bucket that already exists and answers to these credentials is left as it
// is (exit 0), so it doubles as a check of a bucket made in a console. The URL
// is read by the server's own parser (the build in dist/, made by `npm ci`), so
// bucket, endpoint, region and addressing style are exactly what the servers use.
import { CreateBucketCommand, HeadBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3'

const { parseS3Url } = await import('../dist/src/storage/s3.js').catch(() => {
  process.stderr.write('create-bucket: no build in dist/: run `npm ci` (or `npm run build`) first\n')
  process.exit(1)
})

function fail(message) {
  process.stderr.write(`create-bucket: ${message}\n`)
  process.exit(1)
}

const raw = process.env.STORAGE_URL
if (!raw || !raw.startsWith('s3:')) fail('STORAGE_URL must be set to s3://<bucket>?endpoint=...&region=... (read the env file first)')
let location
try {
  location = parseS3Url(raw)
} catch (error) {
  fail(error.message)
}
// As the server does: no notice about future Node versions before the one line this prints.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
const client = new S3Client({
  region: location.region,
  ...(location.endpoint ? { endpoint: location.endpoint } : {}),
  forcePathStyle: location.pathStyle,
  // The same choice as src/storage/s3.ts: many S3-compatible servers reject the SDK's newer default checksums.
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
})
const { bucket } = location
const where = location.endpoint ?? `AWS region ${location.region}`

const status = (error) => (error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined)

try {
  await client.send(new HeadBucketCommand({ Bucket: bucket }))
  console.log(`create-bucket: bucket "${bucket}" at ${where} already exists and these credentials reach it: nothing to do`)
  process.exit(0)
} catch (error) {
  const code = status(error)
  if (code === 403 || code === 401) fail(`bucket "${bucket}" at ${where}: access refused (it may belong to someone else, or the key lacks s3:ListBucket on it)`)
  if (code !== 404) fail(`cannot reach ${where}: ${error.name}: ${error.message}`)
}

try {
  // AWS itself wants the region named for any region but us-east-1; other stores take the region from the endpoint.
  const configuration = !location.endpoint && location.region !== 'us-east-1'
    ? { CreateBucketConfiguration: { LocationConstraint: location.region } }
    : {}
  await client.send(new CreateBucketCommand({ Bucket: bucket, ...configuration }))
} catch (error) {
  if (error.name === 'BucketAlreadyOwnedByYou') {
    console.log(`create-bucket: bucket "${bucket}" at ${where} already exists: nothing to do`)
    process.exit(0)
  }
  if (error.name === 'BucketAlreadyExists') fail(`the name "${bucket}" is taken by another account: choose another in STORAGE_URL`)
  if (status(error) === 403) fail(`this key may not create buckets: create "${bucket}" in the provider's console, or run this once with a key that may`)
  fail(`creating "${bucket}" at ${where} failed: ${error.name}: ${error.message}`)
}
client.destroy()
console.log(`create-bucket: created bucket "${bucket}" at ${where}`)
