import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections open through the proxy now. */
  open: () => number;
  /** Cuts every open connection at once (both sides destroyed, nothing more is forwarded). */
  cut: () => void;
  close: () => Promise<void>;
}

export interface TcpProxyOptions {
  /**
   * Called with every chunk the client sends; true resets that connection (RST to the client, so
   * its driver sees ECONNRESET, not an orderly close) instead of forwarding the chunk.
   */
  resetWhen?: (chunk: Buffer) => boolean;
}

/** A TCP proxy to `target` on a free port, so a test can break a client's connections while its server stays up. */
export function tcpProxy(target: { host: string; port: number }, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => {
      if (options.resetWhen?.(chunk)) {
        pairs.delete(pair);
        upstream.destroy();
        client.resetAndDestroy();
      } else upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  const cut = () => {
    for (const [client, upstream] of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        open: () => pairs.size,
        cut,
        close: () =>
          new Promise<void>((done) => {
            cut();
            server.close(() => done());
          }),
      });
    });
  });
}
