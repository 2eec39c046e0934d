// Everything the benchmark starts or creates registers its undoing here; run() undoes it all in
// reverse order exactly once, whether the run succeeded, failed, or was interrupted (run.ts calls
// it from finally and from SIGINT/SIGTERM handlers).
export interface Cleanup {
  defer(label: string, undo: () => Promise<void> | void): void
  run(): Promise<void>
}

export function createCleanup(log: (line: string) => void): Cleanup {
  const steps: Array<{ label: string; undo: () => Promise<void> | void }> = []
  let running: Promise<void> | undefined
  return {
    defer(label, undo) {
      steps.push({ label, undo })
    },
    run() {
      running ??= (async () => {
        for (const step of steps.reverse()) {
          try {
            await step.undo()
          } catch (err) {
            log(`cleanup: ${step.label} failed: ${err instanceof Error ? err.message : String(err)}`)
          }
        }
      })()
      return running
    },
  }
}
