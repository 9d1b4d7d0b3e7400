// bin/run.js on a Node older than mkt needs (22.13). Written for any Node (no syntax newer than
// Node 10), since this is the one file that runs on one. In a checkout, `npm ci` brought the project's
// own Node (the `node` dev dependency, node_modules/node): mkt runs itself again on that Node, as the
// `npm run` scripts already do, so `./bin/run.js` and an `npm link`ed `mkt` work on the system's old
// Node as the README says. Elsewhere (an installed package, a checkout before `npm ci`) it refuses
// in one sentence, with the line that works from there.
'use strict';
var fs = require('fs');
var path = require('path');
var childProcess = require('child_process');

var root = path.join(__dirname, '..');
var ownNode = path.join(
  root,
  'node_modules',
  'node',
  'bin',
  process.platform === 'win32' ? 'node.exe' : 'node',
);
// Signals a terminal sends to its whole foreground process group (the child is in ours).
var TERMINAL_SIGNALS = ['SIGINT', 'SIGQUIT'];
var FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];

function realpath(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Whether this process is in its terminal's foreground process group (Linux: /proc/self/stat's pgrp
 * and tpgid; elsewhere: a terminal on any standard stream). Ctrl-C reaches the child by itself then.
 */
function inForeground() {
  try {
    var stat = fs.readFileSync('/proc/self/stat', 'utf8');
    var fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[2] === fields[5];
  } catch {
    var tty = require('tty');
    return tty.isatty(0) || tty.isatty(1) || tty.isatty(2);
  }
}

/** Runs bin/run.js again on `node`: stdio shared, signals passed on, its exit code or signal ours. */
function relaunch(node) {
  var child = childProcess.spawn(node, process.execArgv.concat(process.argv.slice(1)), { stdio: 'inherit' });
  var handlers = {};
  FORWARDED.forEach(function (signal) {
    handlers[signal] = function () {
      if (TERMINAL_SIGNALS.indexOf(signal) >= 0 && inForeground()) return; // the terminal told the child
      try {
        child.kill(signal);
      } catch {
        // the child has ended: its exit is on the way
      }
    };
    process.on(signal, handlers[signal]);
  });
  child.on('error', function (err) {
    process.stderr.write('mkt could not start ' + node + ' (' + (err.code || err.message) + ').\n');
    process.exitCode = 1;
  });
  child.on('exit', function (code, signal) {
    FORWARDED.forEach(function (name) {
      process.removeListener(name, handlers[name]);
    });
    if (signal) process.kill(process.pid, signal);
    else process.exitCode = code;
  });
}

/** A word as a POSIX shell reads it back. */
function shellWord(word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : "'" + word.replace(/'/g, "'\\''") + "'";
}

/** The refusal, with the fix that works from where the person stands. */
function refuse() {
  var lines = ['mkt needs Node.js 22.13 or newer; this is Node.js ' + process.version + '.'];
  if (fs.existsSync(path.join(root, 'src')) && fs.existsSync(path.join(root, 'package-lock.json'))) {
    // A checkout before `npm ci`: that brings the project's own Node, which mkt then uses.
    lines.push('  Try: cd ' + shellWord(root) + ' && npm ci && npm run build');
  } else {
    var script = realpath(process.argv[1]) || process.argv[1];
    var words = ['npx', '-y', 'node@22', script].concat(process.argv.slice(2));
    lines.push('  Try: ' + words.map(shellWord).join(' '));
    lines.push('  Or install Node.js 22 or 24 (https://nodejs.org/, or `nvm install 22`) and run mkt again.');
  }
  process.stderr.write(lines.join('\n') + '\n');
  process.exitCode = 1;
}

/** Runs mkt on the project's own Node when there is one (and it is not this one); else refuses. */
module.exports = function onOldNode() {
  var own = realpath(ownNode);
  if (own && own !== realpath(process.execPath)) relaunch(own);
  else refuse();
};
