// /packs-sync/: how a player gets packs-sync from this site and runs it with
// Node.js alone: what it does, the download (its size and SHA-256), and the
// commands to fetch, check and run it, with this site's address filled in.
// The bundle itself is served by src/sync-client/routes.ts.
import { SYNC_CLIENT_FILENAME, SYNC_CLIENT_PAGE, SYNC_CLIENT_PATH } from '../api/sync-client.js'
import type { App } from '../http/types.js'
import { publicOrigin } from '../http/urls.js'
import { newestKnownRelease } from '../minecraft/releases.js'
import { NOT_BUILT_DETAIL, type SyncClientBundle } from '../sync-client/bundle.js'
import { formatBytes, formatCount } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'

export default async function syncClientPages(app: App): Promise<void> {
  app.get(SYNC_CLIENT_PAGE, { schema: { hide: true } }, async (request, reply) => {
    const body = syncClientBody(app.syncClient, publicOrigin(app.config, request), newestKnownRelease())
    return sendPage(app, request, reply, { title: 'packs-sync', body })
  })
}

/**
 * A word as a POSIX shell reads it back unchanged: as it is when it holds only characters no shell treats
 * specially (every ordinary https://host:port/path), else in single quotes. PACKS_BASE_URL may have a path,
 * and a URL path may hold ' $ ; & or (.
 */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

function syncClientBody(bundle: SyncClientBundle | null, origin: string, release: string): SafeHtml {
  const intro = html`<h1>packs-sync</h1>
<p class="lead">packs-sync keeps a folder of packs (your game's <code>resourcepacks</code> folder, or a world's <code>datapacks</code>) up to date
from this site: it recognises each archive by its SHA-256 and replaces it with the newest version that runs on your Minecraft release, under the same file name.
It trusts only answers signed with this site's key and downloads whose size and SHA-256 match them, and it leaves archives this site does not know alone.</p>`
  if (!bundle) return html`${intro}${alertLine(`Not available here: ${NOT_BUILT_DETAIL}.`)}`

  const site = shellWord(origin)
  // Joined by && so that, pasted as one block, nothing runs after a step that failed: above all, not a file whose hash did not match.
  // The password reaches curl on its standard input (-H @-, printf being the shell's own), never in its arguments,
  // which other users of the computer can read.
  const commands = [
    `printf 'X-Master-Password: %s\\n' "$PACKS_MASTER_PASSWORD" | curl -fsS -H @- -o ${SYNC_CLIENT_FILENAME} ${shellWord(`${origin}${SYNC_CLIENT_PATH}`)} &&`,
    `echo "${bundle.sha256}  ${SYNC_CLIENT_FILENAME}" | sha256sum -c &&`,
    `node ${SYNC_CLIENT_FILENAME} ~/.minecraft/resourcepacks --site ${site} --game-version ${release}`,
  ].join('\n')
  return html`${intro}
<h2>Download</h2>
<p><a href="${SYNC_CLIENT_PATH}" download="${SYNC_CLIENT_FILENAME}">${SYNC_CLIENT_FILENAME}</a>: ${formatBytes(bundle.size)} (${formatCount(bundle.size)} bytes), one file that runs with
<a href="https://nodejs.org/">Node.js</a> 20.12 or newer and nothing else. It is the packs-sync this site was built with.</p>
<p class="lead">SHA-256: <code id="sync-client-sha256">${bundle.sha256}</code></p>

<h2>Fetch, check and run it</h2>
<p>In a terminal, first the site password, read into a variable (it stays out of your shell's history; packs-sync reads it from there too):</p>
<pre><code>printf 'Site password: '; read -rs PACKS_MASTER_PASSWORD; echo; export PACKS_MASTER_PASSWORD</code></pre>
<p>Then fetch packs-sync, check it is the file above, and run it on your resource packs:</p>
<pre><code id="sync-client-commands">${commands}</code></pre>
<div class="actions"><button type="button" class="secondary" data-copy="#sync-client-commands">Copy commands</button></div>
<ul class="lead">
<li><code>sha256sum -c</code> says <code>${SYNC_CLIENT_FILENAME}: OK</code>; on macOS use <code>shasum -a 256 -c</code>; on Windows run the commands in Git Bash or WSL. If it says <code>FAILED</code>, do not run the file.</li>
<li>Give the folder your packs are in: on macOS <code>~/Library/Application Support/minecraft/resourcepacks</code>, on Windows
<code>%APPDATA%\\.minecraft\\resourcepacks</code>, or a world's <code>saves/&lt;world&gt;/datapacks</code>.</li>
<li><code>--game-version</code> is the Minecraft release you play (this site knows releases up to ${release}).</li>
<li>To update again later, run the last line again. <code>node ${SYNC_CLIENT_FILENAME} --help</code> lists the other options, such as <code>--dry-run</code>.</li>
</ul>
<p class="muted">For launchers and scripts, the same facts as JSON: <a href="/api/packs-sync/">/api/packs-sync/</a>.</p>`
}
