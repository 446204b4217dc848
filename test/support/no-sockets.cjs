// Preloaded into a CLI process by tests (node --require): any attempt to open a TCP connection is
// written to stderr and refused, so a test can tell that a command sent nothing.
const net = require('node:net');
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  // Node normalises connect()'s arguments into an array before it calls this method again.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const o = typeof first === 'object' && first !== null ? first : { port: first, host: args[1] };
  if (o.path === undefined) {
    process.stderr.write(`SOCKET-CONNECT-ATTEMPT ${o.host}:${o.port}\n`);
    throw new Error('sockets are forbidden in this test process');
  }
  return connect.apply(this, args);
};
