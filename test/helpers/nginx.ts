// nginx from Debian (`/usr/sbin/nginx`, nginx-light) in front of a server, for the tests and the benchmark
// of downloads that nginx sends (PACKS_ACCEL_REDIRECT): on a free loopback port, one worker, with a
// throwaway prefix directory for its configuration, logs and temporary files, as the benchmark's and the
// deploy rehearsal's nginx run. The internal location is the one of docs/deploy.md ("One machine behind
// nginx"), read from the page, so what the tests check is what operators paste.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { ROOT, freePort } from './server.js'
import { tempDir } from './temp.js'

/** The runbook's location block, marked `<!-- rehearsal: one-machine-nginx -->` in docs/deploy.md. */
export function runbookAccelLocation(): string {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8')
  const block = /<!-- rehearsal: one-machine-nginx -->\n```nginx\n([\s\S]*?)\n```/.exec(page)?.[1]
  if (!block) throw new Error('docs/deploy.md has no nginx block marked <!-- rehearsal: one-machine-nginx -->')
  return block
}

/** The runbook's internal location over `storeDir` instead of /var/lib/packs-files/, under `prefix` (PACKS_ACCEL_REDIRECT). */
export function accelLocation(storeDir: string, prefix = '/_packs_files/'): string {
  const block = runbookAccelLocation()
  if (!block.includes('alias /var/lib/packs-files/;') || !block.includes('location /_packs_files/ {')) {
    throw new Error('the runbook\'s nginx location no longer has the lines this helper swaps')
  }
  return block.replace('alias /var/lib/packs-files/;', `alias ${storeDir.replace(/\/?$/, '/')};`).replace('location /_packs_files/ {', `location ${prefix} {`)
}

export interface NginxOptions {
  /** Lines inside `server { … }` besides `listen`: locations. */
  server: string
  /** host:port of the server behind, as the runbook's `upstream packs` (kept-alive connections); proxyLocation() passes to it. */
  upstream?: string
  /** `sendfile on` (Debian's nginx.conf) or off. */
  sendfile?: boolean
  /** Command prefix to start it with (`taskset -c 0`, the benchmark's pinning). */
  prefixCommand?: string[]
}

export interface RunningNginx {
  url: string
  child: ChildProcess
  /** The process's directory: nginx.conf, error.log. */
  dir: string
  errorLog(): string
  stop(): Promise<void>
}

/** The `location /` of the runbook's site (step 6), passing every request to the upstream. */
export function proxyLocation(): string {
  return `location / {
    proxy_pass http://packs;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $http_host;
    proxy_set_header X-Forwarded-For $remote_addr;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_set_header X-Forwarded-Host "";
  }`
}

/**
 * Starts nginx and waits until it answers. As root (CI), its workers stay root as the benchmark's do:
 * the tests' data directories lie under the job's own 0700 temporary directory, which no other user may
 * enter; the rehearsal runs them as another user in the store's group.
 */
export async function startNginx(options: NginxOptions): Promise<RunningNginx> {
  const dir = tempDir('packs-nginx-')
  const port = await freePort()
  const asRoot = process.getuid?.() === 0
  fs.writeFileSync(path.join(dir, 'nginx.conf'), `${asRoot ? 'user root;\n' : ''}worker_processes 1;
daemon off;
error_log ${dir}/error.log;
pid ${dir}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile ${options.sendfile === false ? 'off' : 'on'};
  tcp_nopush on;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${options.upstream ? `  upstream packs {\n    server ${options.upstream};\n    keepalive 16;\n    keepalive_timeout 60s;\n  }\n` : ''}  server {
    listen 127.0.0.1:${port};
${options.server}
  }
}
`)
  const [command, ...args] = [...(options.prefixCommand ?? []), 'nginx', '-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')]
  const child = spawn(command!, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const errorLog = () => `${stderr}${fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : ''}`
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  process.once('exit', () => child.kill('SIGKILL'))
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited at start: ${errorLog().slice(0, 2000)}`)
    try {
      await fetch(`${url}/`, { signal: AbortSignal.timeout(1000) }).then((res) => res.arrayBuffer())
      break
    } catch {
      if (i > 200) throw new Error(`nginx did not answer within 10 s: ${errorLog().slice(0, 2000)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return {
    url,
    child,
    dir,
    errorLog,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await exited
      }
    },
  }
}
