import { describe, expect, it } from 'vitest';
import { isCertwrightError } from '../../src/errors.js';
import {
  ALERT_TEMPLATE_VARIABLES,
  parseTemplate,
  renderTemplate,
  renderUrlTemplate,
  type TemplateOptions,
} from '../../src/notify/template/index.js';
import { ALERT, CUSTOM_JSON_TEMPLATE, DATA } from './fixtures.js';

/**
 * Expected outputs written by hand from the Go text/template and fmt documentation: what Go
 * prints for the same template over the same data held as a Go program would hold it (`Value`
 * and `Threshold` float64, `Ints` []int, maps `map[string]any`, lists `[]any`). Where the
 * engine knowingly differs from Go, docs/notifications/templates.md says so and no case here
 * depends on it.
 */
const GOLDEN: [name: string, template: string, expected: string][] = [
  // Fields, variables, the 13 alert variables.
  ['field', '{{.Level}}', 'critical'],
  ['spaces inside an action', '{{ .Level }}', 'critical'],
  ['nested field', '{{.Labels.env}}', 'prod'],
  ['root variable', '{{$l := .Level}}{{$l}}-{{$.Type}}', 'critical-cpu'],
  ['float field', '{{.Value}}', '95.5'],
  ['integral float field', '{{.Threshold}}', '90'],
  ['dot is the data', '{{with .Labels}}{{.}}{{end}}', 'map[env:prod team:infra]'],
  ['slice printing', '{{.List}}', '[a b c]'],
  ['map printing, sorted keys', '{{.Map}}', 'map[a:1 b:2 c:3]'],
  [
    'a nil result prints <no value>; nil inside a value prints <nil>',
    '{{.Nothing}} {{print .Nothing}} {{printf "%v" .Nothing}}',
    '<no value> <nil> <nil>',
  ],
  ['booleans', '{{true}} {{false}}', 'true false'],
  // Literals.
  [
    'numbers in Go syntax',
    '{{0x1F}} {{0o17}} {{017}} {{0b101}} {{1_000}} {{-5}} {{+3}} {{1.5}} {{.5}}',
    '31 15 15 5 1000 -5 3 1.5 0.5',
  ],
  ['float literal with exponent', '{{1e-5}} {{2.5e3}}', '1e-05 2500'],
  ['character constants are numbers', "{{'a'}} {{'\\n'}} {{'é'}}", '97 10 233'],
  ['string escapes', '{{"tab\\tq\\"\\\\ \\u00e9\\x41\\101\\U0001F600"}}', 'tab\tq"\\ éAA😀'],
  ['raw string', '{{`raw \\n {{.}}`}}', 'raw \\n {{.}}'],
  // Trim markers and comments.
  ['trim both sides', 'a \n {{- .Level -}} \n b', 'acriticalb'],
  ['trim left only', 'x {{- .Level}} y', 'xcritical y'],
  ['trim right only', 'x {{.Level -}} y', 'x criticaly'],
  ['minus without space is a number', '{{-3}}', '-3'],
  ['comment', 'a{{/* a comment */}}b', 'ab'],
  ['comment over lines with trim', 'a  {{- /* one\ntwo */ -}}  b', 'ab'],
  ['comment with left trim only', '{{.Level}}  {{- /* x */}}  !', 'critical  !'],
  // Pipelines and parentheses.
  ['pipe', '{{.Level | title}}', 'Critical'],
  ['pipe appends the last argument', '{{"a" | printf "%s-%s" "b"}}', 'b-a'],
  ['pipe chain', '{{.Level | printf "%s!" | upper}}', 'CRITICAL!'],
  ['parentheses', '{{printf "[%s] %s" (.Level | upper) .ResourceName}}', '[CRITICAL] web-01'],
  ['field of a parenthesized value', '{{(index .Items 1).Name}}', 'second'],
  ['declaration prints nothing', '{{$x := .Level}}', ''],
  ['assignment in a branch', '{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}', '2'],
  // if / else if / else, with, range.
  ['if', '{{if eq .Level "critical"}}🔴{{else}}🟡{{end}}', '🔴'],
  ['else if chain', '{{if eq .Level "warning"}}W{{else if eq .Level "critical"}}C{{else}}O{{end}}', 'C'],
  ['if on number truth', '{{if .Value}}y{{end}}{{if 0}}y{{else}}n{{end}}', 'yn'],
  [
    'if on empty string and empty list',
    '{{if .Empty}}y{{else}}n{{end}}{{if .EmptyList}}y{{else}}n{{end}}',
    'nn',
  ],
  ['if on nil', '{{if .Nothing}}y{{else}}n{{end}}', 'n'],
  ['if with declaration', '{{if $n := len .List}}{{$n}} items{{end}}', '3 items'],
  ['with', '{{with .ResourceName}}[{{.}}]{{end}}', '[web-01]'],
  ['with else', '{{with .Empty}}x{{else}}y{{end}}', 'y'],
  ['with declaration', '{{with $x := .Level}}{{$x}}/{{.}}{{end}}', 'critical/critical'],
  ['else with chain', '{{with .Empty}}a{{else with .Level}}{{.}}{{end}}', 'critical'],
  ['range over a list', '{{range .List}}<{{.}}>{{end}}', '<a><b><c>'],
  ['range with index and element', '{{range $i, $e := .List}}{{if $i}}, {{end}}{{$e}}{{end}}', 'a, b, c'],
  ['range with one variable takes the element', '{{range $e := .List}}{{$e}}{{end}}', 'abc'],
  ['range over a map in key order', '{{range $k, $v := .Map}}{{$k}}={{$v}};{{end}}', 'a=1;b=2;c=3;'],
  ['range over map values', '{{range .Map}}{{.}}{{end}}', '123'],
  ['range else', '{{range .EmptyList}}x{{else}}none{{end}}', 'none'],
  ['range over nil', '{{range .Nothing}}x{{else}}none{{end}}', 'none'],
  ['range over an integer', '{{range 3}}{{.}}{{end}}', '012'],
  ['range over zero', '{{range 0}}x{{else}}empty{{end}}', 'empty'],
  ['break', '{{range .List}}{{if eq . "b"}}{{break}}{{end}}{{.}}{{end}}', 'a'],
  ['continue', '{{range .List}}{{if eq . "b"}}{{continue}}{{end}}{{.}}{{end}}', 'ac'],
  ['assignment across iterations', '{{$last := ""}}{{range .List}}{{$last = .}}{{end}}{{$last}}', 'c'],
  ['range over items with fields', '{{range .Items}}{{.Name}} {{end}}', 'first second '],
  // Comparison and logic.
  ['eq with several candidates', '{{eq .Level "x" "critical"}}', 'true'],
  ['comparisons', '{{ne 1 2}} {{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1 2}}', 'true true true true false'],
  ['float comparison', '{{if gt .Value 90.0}}over{{end}}', 'over'],
  ['and returns the deciding value', '{{and .Level .Type}}|{{and .Empty .Level}}|{{and 1 0 2}}', 'cpu||0'],
  ['or returns the deciding value', '{{or .Empty .Level}}|{{or 0 "" "z"}}|{{or 0 ""}}', 'critical|z|'],
  ['and stops at the first false argument', '{{and false (index .List 9)}}', 'false'],
  ['or stops at the first true argument', '{{or true (index .List 9)}}', 'true'],
  ['not', '{{not .Empty}} {{not .Level}}', 'true false'],
  ['and/or in if', '{{if and (eq .Type "cpu") (gt .Value .Threshold)}}hot{{end}}', 'hot'],
  // len, index.
  ['len of string is bytes', '{{len .ResourceName}} {{len "héllo"}}', '6 6'],
  ['len of list and map', '{{len .List}} {{len .Map}}', '3 3'],
  ['index list and map', '{{index .List 1}} {{index .Map "a"}}', 'b 1'],
  ['index of a string is a byte', '{{index "abc" 1}}', '98'],
  [
    'index of a missing map key is nil',
    '{{index .Map "zz"}} {{print (index .Map "zz")}}',
    '<no value> <nil>',
  ],
  ['index through nested values', '{{index .Items 0 "Name"}}', 'first'],
  // print, println, printf.
  [
    'print adds spaces between non-strings',
    '{{print "a" "b"}}|{{print 1 2}}|{{print "a" 1 2 "b"}}',
    'ab|1 2|a1 2b',
  ],
  ['print nil', '{{print nil}}', '<nil>'],
  ['println', '{{println "a" 1}}', 'a 1\n'],
  ['printf one decimal', '{{printf "%.1f" .Value}} {{printf "%.1f%%" .Threshold}}', '95.5 90.0%'],
  [
    'printf verbs',
    '{{printf "%v|%6.2f|%-6s|%06d|%x|%X|%o|%b" true 3.14159 "ab" -42 255 255 8 5}}',
    'true|  3.14|ab    |-00042|ff|FF|10|101',
  ],
  ['printf %q', '{{printf "%q" "hi\\n\\"x\\""}}', '"hi\\n\\"x\\""'],
  ['printf %q on non-ASCII and control characters', '{{printf "%q %+q" "é\\x01" "é"}}', '"é\\x01" "\\u00e9"'],
  ['printf %#q prefers a raw string', '{{printf "%#q" "a\\"b"}}', '`a"b`'],
  ['printf string width and precision', '{{printf "%5s|%-5s|%.2s" "abc" "abc" "abc"}}', '  abc|abc  |ab'],
  ['printf missing argument', '{{printf "%d %s" 1}}', '1 %!s(MISSING)'],
  [
    'printf wrong verb',
    '{{printf "%d" "x"}}|{{printf "%s" 3}}|{{printf "%t" 1}}',
    '%!d(string=x)|%!s(int=3)|%!t(int=1)',
  ],
  ['printf extra arguments', '{{printf "a" 3 "x"}}', 'a%!(EXTRA int=3, string=x)'],
  ['printf no verb', '{{printf "100%"}}', '100%!(NOVERB)'],
  ['printf nil', '{{printf "%v %s" nil nil}}', '<nil> %!s(<nil>)'],
  [
    'printf %e %g',
    '{{printf "%e|%g|%.3g|%G" 1234.5678 0.000012345 1234.0 1e-10}}',
    '1.234568e+03|1.2345e-05|1.23e+03|1E-10',
  ],
  [
    'printf %v on floats uses the shortest form',
    '{{printf "%v %v %v" 1234567.5 0.0001 123456.5}}',
    '1.2345675e+06 0.0001 123456.5',
  ],
  [
    'printf rounds half to even on the exact value',
    '{{printf "%.0f %.0f %.1f %.2f %.2f" 0.5 1.5 0.25 2.675 1.005}}',
    '0 2 0.2 2.67 1.00',
  ],
  ['printf rounding carries', '{{printf "%5.1f%%" 99.95}}', '100.0%'],
  [
    'printf signs and padding',
    '{{printf "%+d|% d|%8.3f|%-8.3f|%08.3f" 5 5 3.14159 3.14159 -3.14159}}',
    '+5| 5|   3.142|3.142   |-003.142',
  ],
  ['printf %+.2e', '{{printf "%+.2e" 12345.678}}', '+1.23e+04'],
  ['printf hex of strings', '{{printf "%x % X" "hi" "hi"}}', '6869 68 69'],
  ['printf alternate forms', '{{printf "%#x %#o %#b %x" 255 8 5 -255}}', '0xff 010 0b101 -ff'],
  ['printf %c and %U', '{{printf "%c%c %U" 65 0x1F600 0x1F600}}', 'A😀 U+1F600'],
  ['printf %q on a number quotes the rune', '{{printf "%q" \'x\'}}', "'x'"],
  [
    'printf on a slice applies the verb to each element',
    '{{printf "%v %q %d" .List .List .Ints}}',
    '[a b c] ["a" "b" "c"] [1 2]',
  ],
  ['printf star width', '{{printf "%*d|%-*d|" 4 7 3 7}}', '   7|7  |'],
  ['printf percent', '{{printf "%d%%" 50}}', '50%'],
  // Case and URL helpers.
  [
    'title, upper, lower',
    '{{title "hello wORLD foo_bar x-y"}}|{{upper .Level}}|{{.Message | lower}}',
    'Hello WORLD Foo_bar X-Y|CRITICAL|cpu usage is 95.5% (threshold 90%) on "web-01"',
  ],
  ['upper keeps characters without a one-character upper case', '{{upper "straße"}}', 'STRAßE'],
  ['urlquery', '{{urlquery "a b&c=d/é~"}}', 'a+b%26c%3Dd%2F%C3%A9~'],
  ['urlquery of several values', '{{urlquery "a" 1 2}}', 'a1+2'],
  ['urlpath', '{{urlpath "a b/c?d;e,f$&+:=@"}}', 'a%20b%2Fc%3Fd%3Be%2Cf$&+:=@'],
  // The JSON helper.
  [
    'json of a string with quotes, newlines and emoji',
    '{{.Message | json}} {{json "a\\nb 🔥"}}',
    '"CPU usage is 95.5% (threshold 90%) on \\"web-01\\"" "a\\nb 🔥"',
  ],
  [
    'json of other values',
    '{{json .Value}} {{json .Threshold}} {{json true}} {{json nil}} {{json .List}} {{json .Labels}}',
    '95.5 90 true null ["a","b","c"] {"env":"prod","team":"infra"}',
  ],
  ['json escapes line separators', '{{json "a\u2028b"}}', '"a\\u2028b"'],
];

describe('Go text/template subset: golden outputs', () => {
  it.each(GOLDEN)('%s', (_name, template, expected) => {
    expect(renderTemplate(template, DATA)).toBe(expected);
  });

  it('renders a custom JSON payload that stays valid JSON whatever the values hold', () => {
    const out = renderTemplate(CUSTOM_JSON_TEMPLATE, ALERT);
    expect(JSON.parse(out)).toEqual({
      title: '[CRITICAL] web-01',
      text: 'CPU usage is 95.5% (threshold 90%) on "web-01"',
      severity: 'high',
      value: 95.5,
      threshold: 90,
      resource: { id: 'vm/101', node: 'pve1', type: 'cpu' },
      started: '2024-05-01T11:55:00Z',
      link: 'https://monitor.example.test/alerts/alert-42',
    });
    const hostile = {
      ...ALERT,
      Message: 'quote " backslash \\ newline \n tab \t nul \u0000 emoji 🔥 </script>',
    };
    expect(JSON.parse(renderTemplate(CUSTOM_JSON_TEMPLATE, hostile)).text).toBe(hostile.Message);
  });

  it('reads all 13 alert variables', () => {
    expect(ALERT_TEMPLATE_VARIABLES).toHaveLength(13);
    const template = ALERT_TEMPLATE_VARIABLES.map((v) => `${v}={{.${v}}}`).join('\n');
    expect(renderTemplate(template, ALERT)).toBe(
      [
        'ID=alert-42',
        'Level=critical',
        'Type=cpu',
        'ResourceName=web-01',
        'ResourceID=vm/101',
        'Node=pve1',
        'Instance=https://monitor.example.test',
        'Message=CPU usage is 95.5% (threshold 90%) on "web-01"',
        'Value=95.5',
        'Threshold=90',
        'Duration=5m0s',
        'Timestamp=2024-05-01T12:00:00Z',
        'StartTime=2024-05-01T11:55:00Z',
      ].join('\n'),
    );
  });

  it('parses once and renders many times with different data', () => {
    const template = parseTemplate('{{.Level | upper}}');
    expect(template.render({ Level: 'warning' })).toBe('WARNING');
    expect(template.render({ Level: 'critical' })).toBe('CRITICAL');
  });

  it('reads Date values as RFC 3339 text', () => {
    expect(renderTemplate('{{.At}}', { At: new Date('2024-05-01T12:00:00Z') })).toBe(
      '2024-05-01T12:00:00.000Z',
    );
  });
});

/** The typed error of rendering `template`, or undefined when it renders. */
function failure(template: string, data: unknown = DATA, options: TemplateOptions = {}) {
  try {
    renderTemplate(template, data, options);
    return undefined;
  } catch (error) {
    if (!isCertwrightError(error)) throw error;
    return error;
  }
}

describe('missing keys', () => {
  it('fails naming the key by default, so a typo shows when the template is tested', () => {
    const error = failure('{{.Levle}}');
    expect(error?.reason).toBe('invalid_input');
    expect(error?.message).toContain('map has no entry for key "Levle"');
  });

  it("prints Go's <no value> when asked to behave like Go's default", () => {
    expect(
      renderTemplate('[{{.Levle}}] {{if .Levle}}y{{else}}n{{end}} {{.Levle.Deeper}}', DATA, {
        missingKey: 'no-value',
      }),
    ).toBe('[<no value>] n <no value>');
    expect(renderTemplate('{{print .Levle}} {{printf "%v" .Levle}}', DATA, { missingKey: 'no-value' })).toBe(
      '<nil> <nil>',
    );
    expect(failure('{{.Levle | upper}}', DATA, { missingKey: 'no-value' })?.message).toContain(
      'invalid value; expected string',
    );
  });
});

describe('parse and execution errors carry line and column', () => {
  it.each([
    ['{{.Level', 1, 3, 'unclosed action'],
    ['line one\n{{if .Level}}\n  {{end', 3, 5, 'unclosed action'],
    ['{{if .Level}}x', 1, 3, 'has no {{end}}'],
    ['ok\n{{else}}', 2, 3, 'unexpected {{else}}'],
    ['{{end}}', 1, 3, 'unexpected {{end}}'],
    ['{{.Level | nosuch}}', 1, 12, 'function "nosuch" not defined'],
    ['{{template "x"}}', 1, 3, '{{template}} is not supported'],
    ['{{define "x"}}{{end}}', 1, 3, '{{define}} is not supported'],
    ['{{$y}}', 1, 3, 'undefined variable "$y"'],
    ['{{if true}}{{$z := 1}}{{end}}{{$z}}', 1, 32, 'undefined variable "$z"'],
    ['{{break}}', 1, 3, '{{break}} outside {{range}}'],
    ['{{"unterminated}}', 1, 3, 'unterminated quoted string'],
    ['{{/* never closed }}', 1, 1, 'unclosed comment'],
    ['{{/* c */ }}', 1, 10, 'comment ends before closing delimiter'],
    ['{{3 | 4}}', 1, 7, 'non executable command in pipeline stage 2'],
    ['{{.Level | }}', 1, 12, 'missing command after |'],
    ['{{}}', 1, 3, 'missing value for command'],
    ['{{(.Level}}', 1, 10, 'unclosed left paren'],
    ['{{.Level)}}', 1, 9, 'unexpected right paren'],
    ['{{3x}}', 1, 3, 'bad number syntax'],
    ['{{1__0}}', 1, 3, 'bad number syntax'],
    ['{{"a" .Level}}', 1, 3, 'can\'t give argument to non-function "a"'],
    ['{{.Level 1}}', 1, 3, 'Level is not a method but has arguments'],
    ['{{nil}}', 1, 3, 'nil is not a command'],
    ['{{"\\q"}}', 1, 4, 'unknown escape sequence'],
    ['{{"a".Level}}', 1, 3, 'unexpected . after term'],
    ['{{range .List}}{{else if .X}}{{end}}', 1, 23, 'unexpected "if" in else'],
    ['{{printf "%[1]d" 1}}', 1, 3, 'explicit argument indexes'],
    // Execution errors.
    ['\n\n  {{index .List 5}}', 3, 5, 'error calling index: index out of range: 5'],
    ['{{len 3}}', 1, 3, 'len of type int'],
    ['{{upper 3}}', 1, 3, 'wrong type for value; expected string; got int'],
    ['{{lt "a" 1}}', 1, 3, 'incompatible types for comparison'],
    ['{{lt true false}}', 1, 3, 'invalid type for comparison'],
    ['{{eq .List .List}}', 1, 3, 'non-comparable type'],
    ['{{eq 1}}', 1, 3, 'wrong number of args for eq: want at least 2 got 1'],
    ['{{len}}', 1, 3, 'wrong number of args for len: want 1 got 0'],
    ['{{.Level.Foo}}', 1, 3, "can't evaluate field Foo in type string"],
    ['{{.Nothing.Foo}}', 1, 3, 'nil pointer evaluating .Foo'],
    ['{{range .Level}}{{end}}', 1, 3, "range can't iterate over critical"],
    ['{{range $i, $e := 3}}{{end}}', 1, 3, "can't use 3 to iterate over more than one variable"],
    ['{{json .Value}}\n{{index nil 1}}', 2, 3, 'index of untyped nil'],
  ])('%j → line %i, column %i: %s', (template, line, column, message) => {
    const error = failure(template);
    expect(error?.reason, template).toBe('invalid_input');
    expect(error?.message).toContain(message);
    expect(error?.extra).toEqual({ line, column });
    expect(error?.message).toContain(`line ${line}, column ${column}`);
    expect(error?.fields).toEqual([{ field: 'template', message: error?.message }]);
  });

  it('names the field given by the caller', () => {
    expect(failure('{{', DATA, { field: 'payload_template' })?.fields[0]?.field).toBe('payload_template');
  });
});

describe('limits', () => {
  it('refuses a template above the size limit', () => {
    const error = failure('x'.repeat(70_000));
    expect(error?.reason).toBe('invalid_input');
    expect(error?.extra).toEqual({ limit: 'template_size' });
    expect(failure('x'.repeat(2000), DATA, { limits: { maxTemplateBytes: 1000 } })?.extra).toEqual({
      limit: 'template_size',
    });
  });

  it('stops a loop at the step budget', () => {
    expect(failure('{{range 1000}}{{range 1000}}{{end}}{{end}}')?.extra).toEqual({ limit: 'steps' });
    expect(failure('{{range 1000000000}}{{end}}')?.extra).toEqual({ limit: 'steps' });
    expect(failure('{{range .List}}{{.}}{{end}}', DATA, { limits: { maxSteps: 5 } })?.extra).toEqual({
      limit: 'steps',
    });
  });

  it('stops output at the output limit, and strings built along the way too', () => {
    expect(failure('{{range 1000}}{{printf "%1000s" "x"}}{{end}}')?.extra).toEqual({ limit: 'output' });
    expect(failure('{{$s := "ab"}}{{range 40}}{{$s = print $s $s}}{{end}}')?.extra).toEqual({
      limit: 'output',
    });
    expect(failure('{{printf "%99999d" 1}}')?.message).toContain('width or precision');
    expect(renderTemplate('{{range 10}}x{{end}}', DATA, { limits: { maxOutputBytes: 10 } })).toBe(
      'x'.repeat(10),
    );
    expect(failure('{{range 11}}x{{end}}', DATA, { limits: { maxOutputBytes: 10 } })?.extra).toEqual({
      limit: 'output',
    });
  });

  it('refuses nesting deeper than the depth limit', () => {
    const deep = `${'{{if true}}'.repeat(60)}x${'{{end}}'.repeat(60)}`;
    expect(failure(deep)?.extra).toEqual({ limit: 'depth' });
    const parens = `{{${'('.repeat(60)}1${')'.repeat(60)}}}`;
    expect(failure(parens)?.extra).toEqual({ limit: 'depth' });
    expect(renderTemplate(`${'{{if true}}'.repeat(20)}x${'{{end}}'.repeat(20)}`, DATA)).toBe('x');
  });
});

describe('URL templates', () => {
  it.each([
    [
      'path segments are encoded by default',
      'https://hooks.example.test/services/{{.ResourceID}}/{{.Level}}',
      'https://hooks.example.test/services/vm%2F101/critical',
    ],
    [
      'query values through urlquery',
      'https://api.example.test/bot123:ABC/sendMessage?chat_id=42&text={{.Message | urlquery}}',
      'https://api.example.test/bot123:ABC/sendMessage?chat_id=42&text=CPU+usage+is+95.5%25+%28threshold+90%25%29+on+%22web-01%22',
    ],
    // fmt.Sprint puts no space between two strings.
    [
      'urlquery as a call',
      'https://x.example.test/q?l={{urlquery .Level " " .Value}}',
      'https://x.example.test/q?l=critical+95.5',
    ],
    [
      'an explicit urlpath is not encoded twice',
      'https://x.example.test/{{.ResourceID | urlpath}}',
      'https://x.example.test/vm%2F101',
    ],
    [
      'query inside a condition',
      'https://x.example.test/a{{if .Value}}?v={{printf "%.1f" .Value | urlquery}}{{end}}',
      'https://x.example.test/a?v=95.5',
    ],
    [
      'a port and literal path',
      'https://x.example.test:8443/{{.Level}}-alerts',
      'https://x.example.test:8443/critical-alerts',
    ],
    [
      'a fragment is like the query',
      'https://x.example.test/p#{{.Level | urlquery}}',
      'https://x.example.test/p#critical',
    ],
  ])('%s', (_name, template, expected) => {
    expect(renderUrlTemplate(template, ALERT)).toBe(expected);
  });

  it.each([
    ['https://x.example.test/q?m={{.Message}}', 'must end with urlquery'],
    ['https://x.example.test/q?m={{.Message | urlpath}}', 'must end with urlquery'],
    ['{{.Instance}}/hook', 'literal scheme and host'],
    ['https://{{.Node}}.example.test/hook', 'literal scheme and host'],
    ['https://x.example.test{{.ResourceID}}', 'literal scheme and host'],
  ])('refuses %s', (template, message) => {
    let error: unknown;
    try {
      renderUrlTemplate(template, ALERT);
    } catch (e) {
      error = e;
    }
    expect(isCertwrightError(error) && error.reason).toBe('invalid_input');
    expect(String((error as Error).message)).toContain(message);
    expect(isCertwrightError(error) && error.fields[0]?.field).toBe('url');
  });
});
