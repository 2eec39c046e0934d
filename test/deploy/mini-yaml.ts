// Just enough YAML for docker-compose.yml as we write it: block mappings and sequences by
// indentation, plain or quoted scalars, comments; a flow sequence ([…]) is kept as its text.
type Node = string | Node[] | { [key: string]: Node }

interface Line {
  indent: number
  text: string
}

export function parseYaml(source: string): Node {
  const lines: Line[] = []
  for (const raw of source.split('\n')) {
    const text = stripComment(raw).trimEnd()
    if (text.trim() === '') continue
    lines.push({ indent: text.length - text.trimStart().length, text: text.trim() })
  }
  const [node] = block(lines, 0, lines[0]?.indent ?? 0)
  return node
}

function stripComment(line: string): string {
  let quote: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quote) {
      if (c === quote) quote = undefined
    } else if (c === '"' || c === "'") quote = c
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i)
  }
  return line
}

function scalar(text: string): string {
  const authz = text.trim()
  if ((authz.startsWith('"') && authz.endsWith('"')) || (authz.startsWith("'") && authz.endsWith("'"))) return authz.slice(1, -1)
  return authz
}

/** Parses the block starting at lines[i] (indent `indent`); returns the node and the next index. */
function block(lines: Line[], i: number, indent: number): [Node, number] {
  if (lines[i]!.text.startsWith('- ')) {
    const list: Node[] = []
    while (i < lines.length && lines[i]!.indent === indent && lines[i]!.text.startsWith('- ')) {
      list.push(scalar(lines[i]!.text.slice(2)))
      i++
    }
    return [list, i]
  }
  const map: Record<string, Node> = {}
  while (i < lines.length && lines[i]!.indent === indent) {
    const { text } = lines[i]!
    const colon = text.indexOf(':')
    if (colon < 0) throw new Error(`not a mapping entry: ${text}`)
    const key = scalar(text.slice(0, colon))
    const rest = text.slice(colon + 1).trim()
    i++
    if (rest !== '') map[key] = scalar(rest)
    else if (i < lines.length && lines[i]!.indent > indent) [map[key], i] = block(lines, i, lines[i]!.indent)
    else map[key] = ''
  }
  return [map, i]
}
