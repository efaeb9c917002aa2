/*
 * A greedy Pusoy Dos / Big Two bot for the referee's stdio protocol, in C99 with the
 * standard library only (no gRPC, no JSON library).
 *
 *   referee match --bot "stdio:clients/stdio/c/bot" --bot greedy --bot random --bot greedy
 *
 * The referee's bridge writes one JSON object per line on stdin, one per message of the
 * Play stream ({"welcome":...}, {"prompt":...}, {"result":...}, {"event":...}). The bot
 * answers each prompt, and each rejection of its current turn that leaves attempts, with
 * one line on stdout: the cards ("5D 5C") or "pass". Debug output goes to stderr.
 * docs/protocol.md, section 8, has the whole protocol.
 *
 * Your strategy goes in choose() below; the rest is plumbing.
 * Options: --misbehave makes the first answer of each hand a card the bot does not hold,
 * to exercise the rejection path (the referee rejects it, the bot answers again).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- A small JSON reader, enough for the referee's lines ------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;

typedef struct JVal {
    JType type;
    int boolean;
    double num;
    char *str;           /* J_STR: the decoded text */
    char *key;           /* the member's name, inside an object */
    struct JVal *child;  /* J_ARR, J_OBJ: the first element or member */
    struct JVal *next;   /* the next element or member */
} JVal;

typedef struct {
    const char *p;
    int depth;
} Parser;

enum { MAX_DEPTH = 64 };

static void jfree(JVal *v) {
    while (v) {
        JVal *next = v->next;
        jfree(v->child);
        free(v->str);
        free(v->key);
        free(v);
        v = next;
    }
}

static void skip_ws(Parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static int hex4(const char *s, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A JSON string at ps->p (on its opening quote), decoded into a new buffer. */
static char *parse_string(Parser *ps) {
    const char *s = ps->p + 1;
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    for (;;) {
        if (n + 4 >= cap) {
            char *bigger = realloc(out, cap *= 2);
            if (!bigger) { free(out); return NULL; }
            out = bigger;
        }
        char c = *s++;
        if (c == '"') break;
        if (c == '\0' || (unsigned char)c < 0x20) { free(out); return NULL; }
        if (c != '\\') { out[n++] = c; continue; }
        c = *s++;
        switch (c) {
            case '"': case '\\': case '/': out[n++] = c; break;
            case 'b': out[n++] = '\b'; break;
            case 'f': out[n++] = '\f'; break;
            case 'n': out[n++] = '\n'; break;
            case 'r': out[n++] = '\r'; break;
            case 't': out[n++] = '\t'; break;
            case 'u': {
                unsigned cp, lo;
                if (!hex4(s, &cp)) { free(out); return NULL; }
                s += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && s[0] == '\\' && s[1] == 'u' &&
                    hex4(s + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    s += 6;
                }
                n += put_utf8(out + n, cp);
                break;
            }
            default: free(out); return NULL;
        }
    }
    out[n] = '\0';
    ps->p = s;
    return out;
}

static JVal *parse_value(Parser *ps);

static JVal *new_val(JType type) {
    JVal *v = calloc(1, sizeof *v);
    if (v) v->type = type;
    return v;
}

/* Elements of an array or members of an object, up to the closing bracket. */
static JVal *parse_container(Parser *ps, JType type) {
    char close = type == J_ARR ? ']' : '}';
    JVal *v = new_val(type), **tail;
    if (!v) return NULL;
    tail = &v->child;
    if (++ps->depth > MAX_DEPTH) { jfree(v); return NULL; }
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) { ps->p++; ps->depth--; return v; }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (type == J_OBJ) {
            if (*ps->p != '"' || !(key = parse_string(ps))) { jfree(v); return NULL; }
            skip_ws(ps);
            if (*ps->p++ != ':') { free(key); jfree(v); return NULL; }
        }
        JVal *item = parse_value(ps);
        if (!item) { free(key); jfree(v); return NULL; }
        item->key = key;
        *tail = item;
        tail = &item->next;
        skip_ws(ps);
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == close) { ps->p++; ps->depth--; return v; }
        jfree(v);
        return NULL;
    }
}

static JVal *parse_value(Parser *ps) {
    JVal *v;
    skip_ws(ps);
    switch (*ps->p) {
        case '{': return parse_container(ps, J_OBJ);
        case '[': return parse_container(ps, J_ARR);
        case '"': {
            char *s = parse_string(ps);
            if (!s || !(v = new_val(J_STR))) { free(s); return NULL; }
            v->str = s;
            return v;
        }
        case 't':
            if (strncmp(ps->p, "true", 4)) return NULL;
            ps->p += 4;
            if ((v = new_val(J_BOOL))) v->boolean = 1;
            return v;
        case 'f':
            if (strncmp(ps->p, "false", 5)) return NULL;
            ps->p += 5;
            return new_val(J_BOOL);
        case 'n':
            if (strncmp(ps->p, "null", 4)) return NULL;
            ps->p += 4;
            return new_val(J_NULL);
        default: {
            char *end;
            double d = strtod(ps->p, &end);
            if (end == ps->p) return NULL;
            ps->p = end;
            if ((v = new_val(J_NUM))) v->num = d;
            return v;
        }
    }
}

/* The whole line as one JSON value, or NULL when it is not JSON. */
static JVal *json_parse(const char *text) {
    Parser ps = {text, 0};
    JVal *v = parse_value(&ps);
    skip_ws(&ps);
    if (v && *ps.p != '\0') { jfree(v); return NULL; }
    return v;
}

/* Member `key` of an object; NULL when absent (proto3 leaves out zero values). */
static JVal *jget(const JVal *obj, const char *key) {
    if (!obj || obj->type != J_OBJ) return NULL;
    for (JVal *m = obj->child; m; m = m->next)
        if (strcmp(m->key, key) == 0) return m;
    return NULL;
}

static int jlen(const JVal *arr) {
    int n = 0;
    if (arr && arr->type == J_ARR)
        for (JVal *e = arr->child; e; e = e->next) n++;
    return n;
}

static JVal *jat(const JVal *arr, int i) {
    if (!arr || arr->type != J_ARR) return NULL;
    JVal *e = arr->child;
    while (e && i-- > 0) e = e->next;
    return e;
}

static int jbool(const JVal *v) { return v && v->type == J_BOOL && v->boolean; }
static double jnum(const JVal *v) {
    if (!v) return 0;
    if (v->type == J_NUM) return v->num;
    if (v->type == J_STR) return strtod(v->str, NULL); /* 64-bit ints are strings */
    return 0;
}
static const char *jstr(const JVal *v) { return v && v->type == J_STR ? v->str : ""; }

/* ---- The bot ---------------------------------------------------------------------- */

static void print_cards(const JVal *cards) {
    int first = 1;
    for (JVal *c = cards ? cards->child : NULL; c; c = c->next) {
        printf(first ? "%s" : " %s", jstr(c));
        first = 0;
    }
    printf("\n");
}

static int contains(const JVal *cards, const char *card) {
    for (JVal *c = cards ? cards->child : NULL; c; c = c->next)
        if (strcmp(jstr(c), card) == 0) return 1;
    return 0;
}

/* The answer to a prompt: a play (its "cards" array), or NULL to pass. Greedy: the
 * weakest play that beats the table; on a lead, the longest play that sheds the lowest
 * card. The referee lists legal_plays weakest first and the hand in ascending order. */
static const JVal *choose(const JVal *prompt) {
    const JVal *plays = jget(prompt, "legal_plays");
    int n = jlen(plays);
    if (n == 0) return NULL;
    if (!jbool(jget(prompt, "is_lead"))) return jget(jat(plays, 0), "cards");
    const char *lowest = jstr(jat(jget(prompt, "hand"), 0));
    const JVal *best = NULL;
    int best_len = 0;
    for (int pass = 0; pass < 2 && !best; pass++) { /* with the lowest card, else any */
        for (JVal *p = plays->child; p; p = p->next) {
            const JVal *cards = jget(p, "cards");
            if (pass == 0 && !contains(cards, lowest)) continue;
            if (jlen(cards) > best_len) { best = cards; best_len = jlen(cards); }
        }
    }
    return best;
}

/* What to send after a rejection: a pass when allowed, else the weakest legal play. */
static void answer_fallback(const JVal *prompt) {
    const JVal *plays = jget(prompt, "legal_plays");
    if (jbool(jget(prompt, "can_pass")) || jlen(plays) == 0) printf("pass\n");
    else print_cards(jget(jat(plays, 0), "cards"));
}

/* The first card of the deck (3C 3S 3H 3D 4C ...) that the hand does not hold. */
static void answer_not_held(const JVal *prompt) {
    static const char ranks[] = "3456789TJQKA2", suits[] = "CSHD";
    const JVal *hand = jget(prompt, "hand");
    for (const char *r = ranks; *r; r++)
        for (const char *s = suits; *s; s++) {
            char card[3] = {*r, *s, '\0'};
            if (!contains(hand, card)) { printf("%s\n", card); return; }
        }
}

/* One line of input, however long, in a buffer that grows; NULL at the end. */
static char *read_line(FILE *in, char **buf, size_t *cap) {
    size_t n = 0;
    if (!*buf) {
        *cap = 1 << 16;
        if (!(*buf = malloc(*cap))) return NULL;
    }
    for (;;) {
        if (!fgets(*buf + n, (int)(*cap - n), in)) return n ? *buf : NULL;
        n += strlen(*buf + n);
        if (n && (*buf)[n - 1] == '\n') return *buf;
        if (n + 1 >= *cap) {
            char *bigger = realloc(*buf, *cap * 2);
            if (!bigger) return NULL;
            *buf = bigger;
            *cap *= 2;
        }
    }
}

int main(int argc, char **argv) {
    int misbehave = 0, status = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--misbehave") == 0) misbehave = 1;
    JVal *prompt_msg = NULL; /* the last prompt's whole line, kept for retries */
    const JVal *prompt = NULL;
    double misbehaved_in_hand = 0;
    char *buf = NULL;
    size_t cap = 0;
    char *line;
    while ((line = read_line(stdin, &buf, &cap))) {
        JVal *msg = json_parse(line);
        const JVal *body = msg && msg->type == J_OBJ ? msg->child : NULL;
        if (!body) {
            fprintf(stderr, "c bot: a line that is not a JSON object: %.80s\n", line);
            jfree(msg);
            continue;
        }
        const char *kind = body->key;
        if (strcmp(kind, "prompt") == 0) {
            jfree(prompt_msg);
            prompt_msg = msg;
            prompt = body;
            double hand_number = jnum(jget(jget(prompt, "state"), "hand_number"));
            if (misbehave && hand_number != misbehaved_in_hand) {
                misbehaved_in_hand = hand_number;
                answer_not_held(prompt);
            } else {
                const JVal *cards = choose(prompt);
                if (cards) print_cards(cards);
                else printf("pass\n");
            }
            fflush(stdout); /* the bridge reads lines as they come: flush each answer */
            continue;
        }
        if (strcmp(kind, "result") == 0 && prompt && !jbool(jget(body, "accepted")) &&
            jnum(jget(body, "attempts_left")) > 0 &&
            strcmp(jstr(jget(body, "turn_id")), jstr(jget(prompt, "turn_id"))) == 0) {
            fprintf(stderr, "c bot: rejected: %s\n", jstr(jget(body, "message")));
            answer_fallback(prompt);
            fflush(stdout);
        } else if (strcmp(kind, "refusal") == 0) {
            fprintf(stderr, "c bot: refused: %s\n", jstr(jget(body, "message")));
            status = 1;
            jfree(msg);
            break;
        } else if (strcmp(kind, "event") == 0 && jget(body, "match_ended")) {
            jfree(msg);
            break;
        }
        jfree(msg);
    }
    jfree(prompt_msg);
    free(buf);
    return status;
}
