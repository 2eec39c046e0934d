// A real reverse proxy in front of the server, as deploy/ ships it: a test CA and a certificate for
// `localhost` made with the openssl command at test time, and nginx or Caddy from the machine's
// packages, started as a child process on the configuration file in deploy/ with only the host
// name, the ports and the certificate's paths replaced. Also the HTTP client of these tests: Node's
// own, so that each request can leave from a loopback address of its choosing (127.0.0.0/8 is all
// on the loopback interface) and the server's idea of the client address can be told apart.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { X509Certificate, createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

export type ProxyName = 'nginx' | 'caddy'

/** The Debian package and the binary it installs. */
const PROXY_BINARIES: Record<ProxyName, string> = { nginx: '/usr/sbin/nginx', caddy: '/usr/bin/caddy' }

export interface TestCertificates {
  dir: string
  /** The test CA, PEM: what a client trusts. */
  ca: string
  certFile: string
  keyFile: string
  /** base64 SHA-256 of the server certificate's SubjectPublicKeyInfo, for Chromium's --ignore-certificate-errors-spki-list. */
  spkiHash: string
}

/** A CA of a day and a certificate it issued for `localhost`, in a new temporary directory. */
export async function makeCertificates(): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'authz-proxy-'))
  const openssl = (...args: string[]) => promisify(execFile)('openssl', args)
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1']
  const at = (name: string) => join(dir, name)
  await openssl('req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-subj', '/CN=authz test CA')
  await openssl(
    'req', '-x509', ...ec, '-keyout', at('server.key'), '-out', at('server.pem'), '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost', '-addext', 'basicConstraints=critical,CA:FALSE',
    '-addext', 'extendedKeyUsage=serverAuth', '-CA', at('ca.pem'), '-CAkey', at('ca.key'),
  ) // prettier-ignore
  const cert = new X509Certificate(await readFile(at('server.pem')))
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' })
  return {
    dir,
    ca: await readFile(at('ca.pem'), 'utf8'),
    certFile: at('server.pem'),
    keyFile: at('server.key'),
    spkiHash: createHash('sha256').update(spki).digest('base64'),
  }
}

export interface RunningProxy {
  /** https://localhost:<port> */
  origin: string
  stop(): Promise<void>
}

/**
 * `text` with each key replaced by its value, every key required to occur: when the shipped file
 * changes so that a replacement no longer applies, the test says so instead of testing something else.
 */
export function substitute(file: string, text: string, replacements: Record<string, string>): string {
  let out = text
  for (const [from, to] of Object.entries(replacements)) {
    if (!out.includes(from)) throw new Error(`${file} no longer contains ${JSON.stringify(from)}`)
    out = out.replaceAll(from, to)
  }
  return out
}

/** deploy/nginx/authz.conf as nginx runs it here: loopback only, the test's ports and certificate. */
export async function nginxConfig(certs: TestCertificates, port: number, upstreamPort: number): Promise<string> {
  const file = 'deploy/nginx/authz.conf'
  const site = substitute(file, await readFile(file, 'utf8'), {
    'listen 443 ssl;': `listen 127.0.0.1:${port} ssl;`,
    'listen [::]:443 ssl;': `listen [::1]:${port} ssl;`,
    'server_name id.example.com;': 'server_name localhost;',
    '/etc/ssl/id.example.com/fullchain.pem': certs.certFile,
    '/etc/ssl/id.example.com/privkey.pem': certs.keyFile,
    'http://127.0.0.1:5000': `http://127.0.0.1:${upstreamPort}`,
  })
  const d = certs.dir
  // The main context a package's /etc/nginx/nginx.conf would give, in the temporary directory. As
  // root the workers would run as nobody, who cannot enter that directory.
  return [
    process.getuid?.() === 0 ? 'user root;' : '',
    `pid ${d}/nginx.pid;`,
    'error_log stderr warn;',
    'worker_processes 1;',
    'events { worker_connections 64; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${d}/${t};`),
    site,
    '}',
  ].join('\n')
}

/** deploy/caddy/Caddyfile as Caddy runs it here: the test's port and certificate instead of ACME. */
export async function caddyConfig(certs: TestCertificates, port: number, upstreamPort: number): Promise<string> {
  const file = 'deploy/caddy/Caddyfile'
  const site = substitute(file, await readFile(file, 'utf8'), {
    'id.example.com {': `localhost:${port} {\n\ttls ${certs.certFile} ${certs.keyFile}`,
    '127.0.0.1:5000': `127.0.0.1:${upstreamPort}`,
  })
  // Global options: no admin endpoint, no redirect listener on port 80, loopback only.
  return `{\n\tadmin off\n\tauto_https disable_redirects\n\tdefault_bind 127.0.0.1 [::1]\n}\n${site}`
}

/** Starts the proxy on `port` in front of the server at 127.0.0.1:`upstreamPort`; resolves once it answers. */
export async function startProxy(name: ProxyName, certs: TestCertificates, port: number, upstreamPort: number): Promise<RunningProxy> {
  const binary = PROXY_BINARIES[name]
  if (!existsSync(binary)) throw new Error(`${binary} is missing: apt-get install -y ${name} (.ci/run installs it)`)
  let child: ChildProcess
  if (name === 'nginx') {
    const conf = join(certs.dir, 'nginx.conf')
    await writeFile(conf, await nginxConfig(certs, port, upstreamPort))
    child = spawn(binary, ['-p', certs.dir, '-e', 'stderr', '-c', conf, '-g', 'daemon off;'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } else {
    const conf = join(certs.dir, 'Caddyfile')
    await writeFile(conf, await caddyConfig(certs, port, upstreamPort))
    // Caddy keeps its state under XDG_DATA_HOME and XDG_CONFIG_HOME: the temporary directory.
    child = spawn(binary, ['run', '--config', conf, '--adapter', 'caddyfile'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: certs.dir, XDG_DATA_HOME: certs.dir, XDG_CONFIG_HOME: certs.dir },
    })
  }
  let out = ''
  child.stdout?.on('data', (d) => (out += d))
  child.stderr?.on('data', (d) => (out += d))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const origin = `https://localhost:${port}`
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  const deadline = Date.now() + 15_000
  for (;;) {
    const res = await send(`${origin}/health/live`, { from: '127.0.0.1', ca: certs.ca }).catch(() => undefined)
    if (res?.status === 200) return { origin, stop }
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`${name} did not answer at ${origin}:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

export async function removeCertificates(certs: TestCertificates | undefined): Promise<void> {
  if (certs) await rm(certs.dir, { recursive: true, force: true })
}

export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/**
 * One request on a new connection from the loopback address `from` (IPv4), over https when the
 * URL says so, trusting `ca` only. `localhost` resolves to 127.0.0.1 here, so that `from` applies.
 */
export function send(
  url: string,
  opts: { from: string; ca?: string; method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const u = new URL(url)
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: opts.method ?? 'GET',
        headers: opts.headers,
        localAddress: opts.from,
        family: 4,
        agent: false,
        ...(opts.ca ? { ca: opts.ca } : {}),
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(opts.body)
  })
}
