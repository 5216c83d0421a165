// loopback: preloaded into mcp-hub (node --require) by the benchmark. mcp-hub has no option for
// its listen address and listens on every interface; this binds a listen(port, ...) that names
// no host to 127.0.0.1 instead.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    if (typeof args[0] === 'number' && typeof args[1] !== 'string')
        args.splice(1, 0, '127.0.0.1');
    return listen.apply(this, args);
};
