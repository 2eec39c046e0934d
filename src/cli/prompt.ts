// Reading a password: from stdin when it is piped (scripts), otherwise from a prompt that does not
// echo. Never from argv: argv is visible to every user in ps and lands in shell history.
import type { CliContext } from './context.js'

async function readAll(stdin: CliContext['stdin']): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks).toString('utf8')
}

/** One line typed on the terminal in raw mode, with nothing echoed. */
function promptHidden(ctx: CliContext, question: string): Promise<string> {
  const { stdin } = ctx
  return new Promise((resolve, reject) => {
    let value = ''
    process.stderr.write(question)
    stdin.setRawMode?.(true)
    stdin.resume()
    const onData = (data: Buffer) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(value))
        if (ch === '\u0003') return done(() => reject(new Error('cancelled')))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else value += ch
      }
    }
    const done = (settle: () => void) => {
      stdin.removeListener('data', onData)
      stdin.setRawMode?.(false)
      stdin.pause()
      process.stderr.write('\n')
      settle()
    }
    stdin.on('data', onData)
  })
}

export async function readPassword(ctx: CliContext): Promise<string> {
  if (!ctx.stdin.isTTY) {
    // Piped: the whole input, without the one trailing newline `echo` adds.
    return (await readAll(ctx.stdin)).replace(/\r?\n$/, '')
  }
  const first = await promptHidden(ctx, 'Password: ')
  const again = await promptHidden(ctx, 'Repeat password: ')
  if (first !== again) throw new Error('the passwords do not match')
  return first
}
