import type { ChildProcess } from 'node:child_process';

/**
 * The next message a bench's child process sends over its IPC channel; rejects, naming the
 * child as `name`, when the child exits before it sends one.
 */
export function nextMessage<M>(child: ChildProcess, name: string): Promise<M> {
  return new Promise<M>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${name} exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (m) => {
      child.off('exit', onExit);
      resolve(m as M);
    });
  });
}
