import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCommandLine } from '../src/cli/command-line.ts';

describe('the CLI command line', () => {
  it('an option value that starts with a dash is taken as the value (a CPO TOKEN_A in Base64url may)', () => {
    const line = parseCommandLine(['cpo', 'connect', '--versions-url', 'https://cpo.example/versions', '--token', '-Zx9_Q', '--name', 'net']);
    assert.equal(line?.values.token, '-Zx9_Q');
    assert.equal(line?.values.name, 'net');
    assert.equal(parseCommandLine(['cpo', 'connect', '--versions-url', 'https://cpo.example/versions', '--token=--double'])?.values.token, '--double');
  });

  it('after `--` nothing is joined; a name that is not one of our options (an Object method) is not taken for one', () => {
    assert.equal(parseCommandLine(['cpo', 'connect', '--versions-url', 'https://cpo.example/versions', '--token', '--toString'])?.values.token, '--toString');
    // A connection named `--token`, given after `--`: the name as it is, not an option joined with what follows.
    assert.equal(parseCommandLine(['cpo', 'show', '--', '--token', '-x'])?.arg, '--token');
  });

  it('an option followed by another of our options still lacks its value', () => {
    assert.throws(() => parseCommandLine(['clients', 'create', '--name', '--json']), /--name/);
    assert.throws(() => parseCommandLine(['cpo', 'connect', '--versions-url', 'https://cpo.example/versions', '--token', '-h']), /--token/);
  });
});
