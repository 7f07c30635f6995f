// libsass driver for benches/thinlto_parity.py: compiles one SCSS
// stylesheet (variables, maps, functions, mixins, loops, nesting, @extend,
// placeholders, colour and string functions) ROUNDS times through libsass's
// C API, prints the first round's CSS and, over all rounds, the total
// output size and a checksum. The same output on every run.
#include <sass.h>
#include <cstdio>
#include <string>

static const int ROUNDS = 40;

static const char *STYLESHEET = R"SCSS(
$base: 4px;
$palette: (primary: #3366cc, secondary: #cc6633, success: #33aa55, danger: #cc3344, muted: #888888);
$sizes: (xs: 0.5, sm: 0.75, md: 1, lg: 1.5, xl: 2);

@function space($n) { @return $n * $base; }
@function tint($c, $p) { @return mix(white, $c, $p); }
@function shade($c, $p) { @return mix(black, $c, $p); }
@function contrast($c) { @if lightness($c) > 50% { @return #111; } @else { @return #fff; } }

@mixin button-variant($name, $color) {
  .btn-#{$name} {
    color: contrast($color);
    background-color: $color;
    border: 1px solid shade($color, 10%);
    &:hover { background-color: tint($color, 15%); }
    &:active, &.active { background-color: shade($color, 20%); box-shadow: inset 0 space(1) space(2) rgba(black, .125); }
    &:disabled { opacity: .65; background-color: desaturate($color, 30%); }
    .icon + & { margin-left: space(2); }
  }
}

%clearfix { &::after { display: block; clear: both; content: ""; } }
%panel { border-radius: space(1); padding: space(3); @extend %clearfix; }

@each $name, $color in $palette { @include button-variant($name, $color); }

@each $size, $factor in $sizes {
  .text-#{$size} { font-size: 1rem * $factor; line-height: 1.2 + $factor * .1; }
  @for $i from 0 through 6 {
    .m-#{$size}-#{$i} { margin: space($i) * $factor; }
    .p-#{$size}-#{$i} { padding: space($i) * $factor space($i * 2) * $factor; }
  }
}

@for $col from 1 through 12 {
  .col-#{$col} { flex: 0 0 percentage($col / 12); max-width: percentage($col / 12); }
  .offset-#{$col} { margin-left: if($col == 12, 0, percentage($col / 12)); }
}

.card {
  @extend %panel;
  background: lighten(map-get($palette, muted), 40%);
  .card-header { font-weight: bold; border-bottom: 1px solid darken(map-get($palette, muted), 10%); }
  .card-body {
    > p { margin: 0 0 space(2); &:last-child { margin-bottom: 0; } }
    ul li { list-style: none; &::before { content: str-slice("-- item", 1, 2); } }
  }
  &.card-#{to-upper-case("wide")} { width: calc(100% - #{space(4)}); }
}

.alert { @extend %panel; }
@each $name, $color in $palette {
  .alert-#{$name} { @extend .alert; color: shade($color, 40%); background: tint($color, 80%); border-color: tint($color, 60%); }
}

$list: ();
@for $i from 1 through 20 { $list: append($list, $i * 3, comma); }
.stats { total: length($list); third: nth($list, 3); joined: join((a b), (c d)); index: index($list, 30); }
@while length($list) > 15 { $list: set-nth($list, 1, 0); $list: ( ); }
.quoted { a: quote(hello); b: unquote("world"); c: str-index("libsass", "sass"); d: str-insert("abc", "X", 2); }
.math { a: round(3.7px); b: ceil(2.1em); c: floor(-1.5); d: abs(-4); e: min(1, 2, 3); f: max(4px, 9px); g: 10px / 3; }
)SCSS";

int main() {
    std::string first;
    unsigned long total = 0, checksum = 0;
    for (int round = 0; round < ROUNDS; ++round) {
        struct Sass_Data_Context *data = sass_make_data_context(sass_copy_c_string(STYLESHEET));
        struct Sass_Options *options = sass_data_context_get_options(data);
        sass_option_set_output_style(options, round % 2 ? SASS_STYLE_COMPRESSED : SASS_STYLE_EXPANDED);
        sass_option_set_precision(options, 5);
        int status = sass_compile_data_context(data);
        struct Sass_Context *ctx = sass_data_context_get_context(data);
        if (status != 0) {
            std::printf("error: %s\n", sass_context_get_error_message(ctx));
            sass_delete_data_context(data);
            return 1;
        }
        const char *out = sass_context_get_output_string(ctx);
        if (round == 0) first = out;
        for (const char *p = out; *p; ++p) {
            checksum = checksum * 31 + (unsigned char)*p;
            ++total;
        }
        sass_delete_data_context(data);
    }
    std::fputs(first.c_str(), stdout);
    std::printf("rounds %d, output bytes %lu, checksum %lx\n", ROUNDS, total, checksum);
    return 0;
}
