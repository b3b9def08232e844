// The client bundle built by scripts/build-web.js, served from memory under
// /assets/. Names carry a content hash, so browsers may keep them forever.
import fs from 'node:fs'
import path from 'node:path'
import { ConfigError } from '../config/index.js'
import { PROJECT_ROOT } from '../config/paths.js'

export const ASSETS_DIR = path.join(PROJECT_ROOT, 'dist', 'web')

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
}

export interface Asset {
  body: Buffer
  contentType: string
}

export class Assets {
  private constructor(
    private readonly manifest: Record<string, string>,
    private readonly files: Map<string, Asset>,
  ) {}

  /** Loads the built bundle; a missing build is a start-up error with the command that fixes it. */
  static load(dir: string = ASSETS_DIR): Assets {
    const manifestPath = path.join(dir, 'manifest.json')
    if (!fs.existsSync(manifestPath)) {
      throw new ConfigError(`the web client is not built (${manifestPath} is missing): run "npm run build"`)
    }
    const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Record<string, string>
    const files = new Map<string, Asset>()
    for (const name of fs.readdirSync(dir)) {
      const contentType = CONTENT_TYPES[path.extname(name)]
      if (contentType) files.set(name, { body: fs.readFileSync(path.join(dir, name)), contentType })
    }
    return new Assets(manifest, files)
  }

  /** The URL of an entry ("create.js", "site.css"). */
  url(entry: string): string {
    const file = this.manifest[entry]
    if (!file) throw new Error(`no built asset named ${entry}; is src/web/client/pages/${entry.replace(/\.js$/, '.ts')} missing?`)
    return `/assets/${file}`
  }

  file(name: string): Asset | undefined {
    return this.files.get(name)
  }
}
