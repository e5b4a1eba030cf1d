import { strict as assert } from 'node:assert';
import { expandTemplate, templateVariables, type TemplateValue } from '../../src/core';

// The variable values of RFC 6570's examples (section 1.2 and section 3.2), and what each
// template expands to, level by level.
const values: Record<string, TemplateValue> = {
  var: 'value',
  hello: 'Hello World!',
  path: '/foo/bar',
  empty: '',
  x: '1024',
  y: '768',
  list: ['red', 'green', 'blue'],
  keys: { semi: ';', dot: '.', comma: ',' },
  half: '50%',
  who: 'fred',
  base: 'http://example.com/home/',
  v: '6',
  dub: 'me/too',
  count: ['one', 'two', 'three'],
  dom: ['example', 'com'],
  empty_keys: {},
};

const levels: Record<string, Array<[string, string]>> = {
  'level 1': [
    ['{var}', 'value'],
    ['{hello}', 'Hello%20World%21'],
    ['{half}', '50%25'],
    ['O{empty}X', 'OX'],
    ['O{undef}X', 'OX'],
  ],
  'level 2': [
    ['{+var}', 'value'],
    ['{+hello}', 'Hello%20World!'],
    ['{+half}', '50%25'],
    ['{+path}/here', '/foo/bar/here'],
    ['here?ref={+path}', 'here?ref=/foo/bar'],
    ['{base}index', 'http%3A%2F%2Fexample.com%2Fhome%2Findex'],
    ['{+base}index', 'http://example.com/home/index'],
    ['{#var}', '#value'],
    ['{#hello}', '#Hello%20World!'],
    ['{#half}', '#50%25'],
    ['X{#var}', 'X#value'],
  ],
  'level 3': [
    ['map?{x,y}', 'map?1024,768'],
    ['{x,hello,y}', '1024,Hello%20World%21,768'],
    ['{+x,hello,y}', '1024,Hello%20World!,768'],
    ['{+path,x}/here', '/foo/bar,1024/here'],
    ['{#x,hello,y}', '#1024,Hello%20World!,768'],
    ['{#path,x}/here', '#/foo/bar,1024/here'],
    ['X{.var}', 'X.value'],
    ['X{.x,y}', 'X.1024.768'],
    ['{/var}', '/value'],
    ['{/var,x}/here', '/value/1024/here'],
    ['{/who,who}', '/fred/fred'],
    ['{;x,y}', ';x=1024;y=768'],
    ['{;x,y,empty}', ';x=1024;y=768;empty'],
    ['{;v,empty,who}', ';v=6;empty;who=fred'],
    ['{?x,y}', '?x=1024&y=768'],
    ['{?x,y,empty}', '?x=1024&y=768&empty='],
    ['?fixed=yes{&x}', '?fixed=yes&x=1024'],
    ['{&x,y,empty}', '&x=1024&y=768&empty='],
    ['{x,undef}', '1024'],
    ['{?x,undef}', '?x=1024'],
  ],
  'level 4': [
    ['{var:3}', 'val'],
    ['{var:30}', 'value'],
    ['{list}', 'red,green,blue'],
    ['{list*}', 'red,green,blue'],
    ['{keys}', 'semi,%3B,dot,.,comma,%2C'],
    ['{keys*}', 'semi=%3B,dot=.,comma=%2C'],
    ['{+path:6}/here', '/foo/b/here'],
    ['{+list}', 'red,green,blue'],
    ['{+list*}', 'red,green,blue'],
    ['{+keys}', 'semi,;,dot,.,comma,,'],
    ['{+keys*}', 'semi=;,dot=.,comma=,'],
    ['{#path:6}/here', '#/foo/b/here'],
    ['{#list}', '#red,green,blue'],
    ['{#list*}', '#red,green,blue'],
    ['{#keys}', '#semi,;,dot,.,comma,,'],
    ['{#keys*}', '#semi=;,dot=.,comma=,'],
    ['X{.var:3}', 'X.val'],
    ['X{.list}', 'X.red,green,blue'],
    ['X{.list*}', 'X.red.green.blue'],
    ['X{.keys}', 'X.semi,%3B,dot,.,comma,%2C'],
    ['X{.keys*}', 'X.semi=%3B.dot=..comma=%2C'],
    ['www{.dom*}', 'www.example.com'],
    ['{/var:1,var}', '/v/value'],
    ['{/list}', '/red,green,blue'],
    ['{/list*}', '/red/green/blue'],
    ['{/list*,path:4}', '/red/green/blue/%2Ffoo'],
    ['{/keys}', '/semi,%3B,dot,.,comma,%2C'],
    ['{/keys*}', '/semi=%3B/dot=./comma=%2C'],
    ['{;hello:5}', ';hello=Hello'],
    ['{;list}', ';list=red,green,blue'],
    ['{;list*}', ';list=red;list=green;list=blue'],
    ['{;keys}', ';keys=semi,%3B,dot,.,comma,%2C'],
    ['{;keys*}', ';semi=%3B;dot=.;comma=%2C'],
    ['{?var:3}', '?var=val'],
    ['{?list}', '?list=red,green,blue'],
    ['{?list*}', '?list=red&list=green&list=blue'],
    ['{?keys}', '?keys=semi,%3B,dot,.,comma,%2C'],
    ['{?keys*}', '?semi=%3B&dot=.&comma=%2C'],
    ['{&var:3}', '&var=val'],
    ['{&list}', '&list=red,green,blue'],
    ['{&list*}', '&list=red&list=green&list=blue'],
    ['{&keys}', '&keys=semi,%3B,dot,.,comma,%2C'],
    ['{&keys*}', '&semi=%3B&dot=.&comma=%2C'],
    ['{?empty_keys*}', ''],
    ['{count*}', 'one,two,three'],
    ['{/count*}', '/one/two/three'],
    ['{;count*}', ';count=one;count=two;count=three'],
    ['{?count*}', '?count=one&count=two&count=three'],
    ['{dub:2}', 'me'],
  ],
};

describe('URI templates: the RFC 6570 examples', () => {
  for (const [level, table] of Object.entries(levels)) {
    it(level, () => {
      for (const [template, expected] of table) assert.equal(expandTemplate(template, values), expected, template);
    });
  }
});

describe('URI templates: what went wrong before', () => {
  it('counts a prefix in characters, so an emoji is kept whole instead of throwing URIError', () => {
    assert.equal(expandTemplate('x://{x:1}', { x: '😀abc' }), 'x://%F0%9F%98%80');
    assert.equal(expandTemplate('x://{x:2}', { x: 'é😀b' }), 'x://%C3%A9%F0%9F%98%80');
    // A lone surrogate cannot be UTF-8: it becomes U+FFFD rather than an exception.
    assert.equal(expandTemplate('x://{x}', { x: '\ud83d' }), 'x://%EF%BF%BD');
  });

  it('writes ;x, not ;x=, for an empty value', () => {
    assert.equal(expandTemplate('x://r{;x}', { x: '' }), 'x://r;x');
  });

  it('keeps a %-escape in a reserved expansion instead of encoding it twice', () => {
    assert.equal(expandTemplate('x://{+p}', { p: 'a%20b c' }), 'x://a%20b%20c');
    assert.equal(expandTemplate('x://{#p}', { p: '100%' }), 'x://#100%25');
    assert.equal(expandTemplate('x://{p}', { p: 'a%20b' }), 'x://a%2520b');
  });

  it('names each variable once, in order, without its modifier, for the editor to ask for', () => {
    assert.deepEqual(templateVariables('x://{a}/{+b:3}{?c,d*}{&e}{#a}'), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(templateVariables('{/list*,path:4}{;x, y}'), ['list', 'path', 'x', 'y']);
  });
});
