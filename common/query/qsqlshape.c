/* qsqlshape: the shape of a grouped aggregate statement (see qsqlshape.h). */
#include "query/qsqlshape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum tk { T_END, T_WORD, T_QWORD, T_NUM, T_STR, T_SYM, T_BAD };

struct tok {
	enum tk t;
	const char *p; /* the token's text (a quoted one's inside) */
	size_t n;
};

struct parse {
	sqlite3 *db;
	const char *s;
	size_t pos;
	struct tok t;          /* the current token */
	struct qsqlshape *out;
	size_t ntext;          /* bytes of out->texts used */
	struct tok alias[QSQLSHAPE_ITEMS]; /* n == 0: none */
};

static int is_word_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_word_char(char c)
{
	return is_word_start(c) || (c >= '0' && c <= '9') || c == '$';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Skips blanks and comments; 0 at an unterminated comment. */
static int skip_blank(struct parse *p)
{
	const char *s = p->s;

	for (;;) {
		char c = s[p->pos];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\f' || c == '\v') {
			p->pos++;
		} else if (c == '-' && s[p->pos + 1] == '-') {
			while (s[p->pos] && s[p->pos] != '\n')
				p->pos++;
		} else if (c == '/' && s[p->pos + 1] == '*') {
			const char *end = strstr(s + p->pos + 2, "*/");
			if (!end)
				return 0;
			p->pos = (size_t)(end - s) + 2;
		} else {
			return 1;
		}
	}
}

/* Reads the next token into p->t: an unknown or unterminated one is T_BAD
 * (the shape is then declined). */
static void next(struct parse *p)
{
	const char *s = p->s;
	size_t i;

	p->t.t = T_BAD;
	p->t.n = 0;
	if (!skip_blank(p))
		return;
	i = p->pos;
	p->t.p = s + i;
	if (!s[i]) {
		p->t.t = T_END;
	} else if (is_word_start(s[i])) {
		while (is_word_char(s[i]))
			i++;
		p->t.t = T_WORD;
	} else if (is_digit(s[i]) || (s[i] == '.' && is_digit(s[i + 1]))) {
		if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
			return;
		while (is_digit(s[i]))
			i++;
		if (s[i] == '.')
			for (i++; is_digit(s[i]); i++)
				;
		if (s[i] == 'e' || s[i] == 'E') {
			size_t j = i + 1;
			if (s[j] == '+' || s[j] == '-')
				j++;
			if (!is_digit(s[j]))
				return;
			for (i = j; is_digit(s[i]); i++)
				;
		}
		if (is_word_char(s[i]) || s[i] == '.')
			return;
		p->t.t = T_NUM;
	} else if (s[i] == '\'' || s[i] == '"') {
		char q = s[i];
		for (i++; s[i] && !(s[i] == q && s[i + 1] != q); i++)
			if (s[i] == q)
				i++; /* a doubled quote */
		if (!s[i])
			return;
		p->t.t = q == '"' ? T_QWORD : T_STR;
		p->t.p++;
		i++;
	} else {
		static const char *const syms[] = {"<=", ">=", "==", "<>", "!=",
		                                   "(", ")", ",", "*", "/", "=",
		                                   "<", ">", ";", "-", "."};
		for (size_t k = 0; k < sizeof syms / sizeof *syms; k++) {
			size_t n = strlen(syms[k]);
			if (!strncmp(s + i, syms[k], n)) {
				p->t.t = T_SYM;
				p->t.n = n;
				p->pos = i + n;
				return;
			}
		}
		return;
	}
	p->t.n = (size_t)(s + i - p->t.p) - (p->t.t == T_STR ||
	                                     p->t.t == T_QWORD);
	p->pos = i;
}

static int is_kw(const struct tok *t, const char *kw)
{
	return t->t == T_WORD && strlen(kw) == t->n && !strncasecmp(t->p, kw, t->n);
}

static int is_sym(const struct tok *t, const char *sym)
{
	return t->t == T_SYM && strlen(sym) == t->n && !strncmp(t->p, sym, t->n);
}

/* Consumes keyword kw or symbol sym when it is the current token. */
static int take_kw(struct parse *p, const char *kw)
{
	if (!is_kw(&p->t, kw))
		return 0;
	next(p);
	return 1;
}

static int take_sym(struct parse *p, const char *sym)
{
	if (!is_sym(&p->t, sym))
		return 0;
	next(p);
	return 1;
}

/* A name token (a word or a quoted identifier without quotes inside)
 * equal to name, case folded as SQLite folds identifiers. */
static int names(const struct tok *t, const char *name)
{
	if (t->t != T_WORD && t->t != T_QWORD)
		return 0;
	if (t->t == T_QWORD && memchr(t->p, '"', t->n))
		return 0;
	return strlen(name) == t->n && !strncasecmp(t->p, name, t->n);
}

static const struct { const char *name; int col; } points_cols[] = {
	{"series", QC_KEY}, {"name", QC_NAME}, {"worker", QC_WORKER},
	{"rank", QC_RANK}, {"time", QC_T}, {"value", QC_VALUE}}, nvtx_cols[] = {
	{"profile", QC_KEY}, {"worker", QC_WORKER}, {"rank", QC_RANK},
	{"start", QC_T}, {"end", QC_END}, {"duration", QC_DURATION},
	{"name", QC_NAME}, {"source_row", QC_SOURCE_ROW},
	{"ordinal", QC_ORDINAL}, {"depth", QC_DEPTH}};

/* The column token t names in the table, or -1 (-2: a column of the view
 * the engine does not compute: the shape is declined). */
static int column_of(const struct parse *p, const struct tok *t)
{
	static const char *const others[] = {"value_text", "source_id",
	                                     "source_row", "tid", "thread_name"};
	int nvtx = p->out->table == QS_NVTX;
	size_t n = nvtx ? sizeof nvtx_cols / sizeof *nvtx_cols
	                : sizeof points_cols / sizeof *points_cols;

	for (size_t k = 0; k < n; k++)
		if (names(t, nvtx ? nvtx_cols[k].name : points_cols[k].name))
			return nvtx ? nvtx_cols[k].col : points_cols[k].col;
	for (size_t k = 0; k < sizeof others / sizeof *others; k++)
		if (names(t, others[k]))
			return -2;
	return -1;
}

/* The item whose alias is t, -1 when none is, -2 when several are. */
static int alias_of(const struct parse *p, const struct tok *t)
{
	int found = -1;

	for (int k = 0; k < p->out->nitems; k++) {
		const struct tok *a = &p->alias[k];
		if (a->n && (t->t == T_WORD || t->t == T_QWORD) &&
		    a->n == t->n && !strncasecmp(a->p, t->p, t->n) &&
		    !memchr(t->p, '"', t->n))
			found = found == -1 ? k : -2;
	}
	return found;
}

/* Reads [-]NUMBER as SQLite reads it into *v (an integer or a real). */
static int number(struct parse *p, struct qsqlmem_val *v)
{
	char sql[96];
	int neg = take_sym(p, "-"), ok = 0;
	sqlite3_stmt *st = NULL;

	if (p->t.t != T_NUM || p->t.n > 64)
		return 0;
	snprintf(sql, sizeof sql, "SELECT %s%.*s", neg ? "-" : "", (int)p->t.n,
	         p->t.p);
	if (sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		memset(v, 0, sizeof *v);
		v->type = sqlite3_column_type(st, 0);
		if (v->type == SQLITE_INTEGER)
			v->i = sqlite3_column_int64(st, 0);
		else
			v->d = sqlite3_column_double(st, 0);
		ok = v->type == SQLITE_INTEGER || v->type == SQLITE_FLOAT;
	}
	sqlite3_finalize(st);
	next(p);
	return ok;
}

/* Reads a string literal into *v (its text kept in out->texts). */
static int text(struct parse *p, struct qsqlmem_val *v)
{
	char *d = p->out->texts + p->ntext;
	size_t n = 0;

	if (p->t.t != T_STR)
		return 0;
	for (size_t k = 0; k < p->t.n; k++) {
		d[n++] = p->t.p[k];
		if (p->t.p[k] == '\'')
			k++; /* the second of a doubled quote */
	}
	d[n] = '\0';
	p->ntext += n + 1;
	memset(v, 0, sizeof *v);
	v->type = SQLITE_TEXT;
	v->s = d;
	v->n = (int)n;
	next(p);
	return 1;
}

static int is_real_col(int col)
{
	return col == QC_T || col == QC_END || col == QC_DURATION;
}

/* CAST(col [/ number] AS INT|INTEGER), CAST already read. */
static int bucket(struct parse *p, struct qsqlshape_expr *x)
{
	struct qsqlmem_val v;

	if (!take_sym(p, "(") || (x->col = column_of(p, &p->t)) < 0 ||
	    !is_real_col(x->col))
		return 0;
	next(p);
	x->bucket = 1;
	x->div = 1.0;
	if (take_sym(p, "/")) {
		if (!number(p, &v))
			return 0;
		x->div = v.type == SQLITE_INTEGER ? (double)v.i : v.d;
		if (!(x->div > 0) && !(x->div < 0))
			return 0; /* division by zero is NULL: not computed */
	}
	return take_kw(p, "AS") && (take_kw(p, "INT") || take_kw(p, "INTEGER"))
	       && take_sym(p, ")");
}

/* An expression of the shape: a column, a bucket or an aggregate. */
static int expr(struct parse *p, struct qsqlshape_expr *x)
{
	static const struct { const char *name; enum qsqlshape_fn fn; } fns[] = {
		{"count", QF_COUNT}, {"sum", QF_SUM}, {"total", QF_TOTAL},
		{"avg", QF_AVG}, {"min", QF_MIN}, {"max", QF_MAX}};
	struct tok t = p->t;

	memset(x, 0, sizeof *x);
	x->col = -1;
	next(p);
	if (is_kw(&t, "CAST") && is_sym(&p->t, "("))
		return bucket(p, x);
	if (t.t == T_WORD && is_sym(&p->t, "(")) {
		for (size_t k = 0; k < sizeof fns / sizeof *fns; k++)
			if (is_kw(&t, fns[k].name))
				x->fn = fns[k].fn;
		if (x->fn == QF_NONE)
			return 0;
		next(p);
		if (x->fn == QF_COUNT && take_sym(p, "*"))
			x->fn = QF_COUNT_STAR;
		else if ((x->col = column_of(p, &p->t)) < 0 ||
		         QC_GROUP_LEVEL(x->col))
			return 0;
		else
			next(p);
		/* FILTER or OVER after the call: not a plain aggregate */
		return take_sym(p, ")") && !is_kw(&p->t, "FILTER") &&
		       !is_kw(&p->t, "OVER");
	}
	x->col = column_of(p, &t);
	return x->col >= 0;
}

static int same_expr(const struct qsqlshape_expr *a,
                     const struct qsqlshape_expr *b)
{
	return a->fn == b->fn && a->col == b->col && a->bucket == b->bucket &&
	       (!a->bucket || a->div == b->div);
}

static int select_list(struct parse *p)
{
	struct qsqlshape *s = p->out;

	do {
		struct tok *a;
		if (s->nitems == QSQLSHAPE_ITEMS)
			return 0;
		a = &p->alias[s->nitems];
		if (!expr(p, &s->items[s->nitems]))
			return 0;
		a->n = 0;
		if (take_kw(p, "AS") || p->t.t == T_QWORD ||
		    (p->t.t == T_WORD && !is_kw(&p->t, "FROM"))) {
			if (p->t.t != T_WORD && p->t.t != T_QWORD)
				return 0;
			*a = p->t;
			next(p);
		}
		s->nitems++;
	} while (take_sym(p, ","));
	return 1;
}

/* col op literal, or col BETWEEN literal AND literal. */
static int condition(struct parse *p)
{
	static const struct { const char *sym; enum qsqlshape_op op; } ops[] = {
		{"=", QO_EQ}, {"==", QO_EQ}, {"<", QO_LT}, {"<=", QO_LE},
		{">", QO_GT}, {">=", QO_GE}};
	struct qsqlshape *s = p->out;
	int col = column_of(p, &p->t), between, op = -1;

	if (col < 0 || s->nconds + 2 > QSQLSHAPE_CONDS)
		return 0;
	next(p);
	between = take_kw(p, "BETWEEN");
	for (size_t k = 0; !between && k < sizeof ops / sizeof *ops; k++)
		if (is_sym(&p->t, ops[k].sym))
			op = (int)ops[k].op;
	if (!between && op < 0)
		return 0;
	if (!between)
		next(p);
	for (int side = 0; side < 1 + between; side++) {
		struct qsqlshape_cond *c = &s->conds[s->nconds++];
		if (side && !take_kw(p, "AND"))
			return 0;
		c->col = col;
		c->op = between ? (side ? QO_LE : QO_GE) : (enum qsqlshape_op)op;
		if (p->t.t == T_STR) {
			/* name, worker and rank have no affinity: a text
			 * equals a text; other columns would convert it */
			if (!text(p, &c->v) || c->op != QO_EQ || col == QC_KEY ||
			    !QC_GROUP_LEVEL(col))
				return 0;
		} else if (!number(p, &c->v) ||
		           (QC_GROUP_LEVEL(col) && c->op != QO_EQ)) {
			return 0;
		}
	}
	return 1;
}

/* A GROUP BY or ORDER BY term naming an item: its position or its alias
 * (when no column has the name); -1 when it is neither, -2 when it is
 * ambiguous or out of range (SQLite's choice is not guessed). */
static int item_ref(struct parse *p)
{
	int k;

	if (p->t.t == T_NUM) {
		struct qsqlmem_val v;
		if (!number(p, &v) || v.type != SQLITE_INTEGER || v.i < 1 ||
		    v.i > p->out->nitems)
			return -2;
		return (int)v.i - 1;
	}
	k = alias_of(p, &p->t);
	if (k < 0)
		return k;
	if (column_of(p, &p->t) != -1)
		return -2;
	next(p);
	return k;
}

static int group_by(struct parse *p)
{
	struct qsqlshape *s = p->out;
	int nbucket = 0;

	do {
		struct qsqlshape_expr *x = &s->keys[s->nkeys];
		int k;
		if (s->nkeys == QSQLSHAPE_KEYS)
			return 0;
		k = item_ref(p);
		if (k == -2)
			return 0;
		if (k >= 0)
			*x = s->items[k];
		else if (!expr(p, x))
			return 0;
		if (x->fn != QF_NONE || !(x->bucket || QC_GROUP_LEVEL(x->col)))
			return 0;
		nbucket += x->bucket;
		s->nkeys++;
	} while (take_sym(p, ","));
	return nbucket <= 1;
}

static int order_by(struct parse *p)
{
	struct qsqlshape *s = p->out;

	do {
		struct qsqlshape_order *o = &s->order[s->norder];
		struct qsqlshape_expr x;
		if (s->norder == QSQLSHAPE_ORDER)
			return 0;
		o->item = item_ref(p);
		o->key = -1;
		if (o->item == -2)
			return 0;
		if (o->item < 0) {
			if (!expr(p, &x))
				return 0;
			for (int k = s->nitems - 1; k >= 0; k--)
				if (same_expr(&x, &s->items[k]))
					o->item = k;
			for (int k = 0; o->item < 0 && k < s->nkeys; k++)
				if (same_expr(&x, &s->keys[k]))
					o->key = k;
			if (o->item < 0 && o->key < 0)
				return 0;
		}
		o->desc = take_kw(p, "DESC");
		if (!o->desc)
			take_kw(p, "ASC");
		if (is_kw(&p->t, "NULLS") || is_kw(&p->t, "COLLATE"))
			return 0;
		s->norder++;
	} while (take_sym(p, ","));
	return 1;
}

static int limit(struct parse *p)
{
	struct qsqlmem_val v;

	if (!number(p, &v) || v.type != SQLITE_INTEGER || v.i < 0)
		return 0;
	p->out->limit = v.i;
	if (take_kw(p, "OFFSET")) {
		if (!number(p, &v) || v.type != SQLITE_INTEGER || v.i < 0)
			return 0;
		p->out->offset = v.i;
	}
	return 1;
}

/* Every select item is an aggregate or shows a key. */
static int items_resolve(struct qsqlshape *s)
{
	for (int k = 0; k < s->nitems; k++) {
		s->item_key[k] = -1;
		if (s->items[k].fn != QF_NONE)
			continue;
		for (int j = 0; j < s->nkeys && s->item_key[k] < 0; j++)
			if (same_expr(&s->items[k], &s->keys[j]))
				s->item_key[k] = j;
		if (s->item_key[k] < 0)
			return 0; /* a bare column */
	}
	return 1;
}

static int statement(struct parse *p)
{
	struct qsqlshape *s = p->out;
	size_t items_at;

	next(p);
	if (!take_kw(p, "SELECT") || is_kw(&p->t, "DISTINCT") ||
	    is_kw(&p->t, "ALL"))
		return 0;
	/* the select list names the table's columns: read it after FROM */
	items_at = (size_t)(p->t.p - p->s) - (p->t.t == T_STR ||
	                                      p->t.t == T_QWORD);
	while (p->t.t != T_END && p->t.t != T_BAD && !is_kw(&p->t, "FROM"))
		next(p);
	if (!take_kw(p, "FROM"))
		return 0;
	if (is_kw(&p->t, "nvtx"))
		s->table = QS_NVTX;
	else if (is_kw(&p->t, "metric_points"))
		s->table = QS_POINTS;
	else
		return 0;
	{
		size_t after = p->pos;
		p->pos = items_at;
		next(p);
		if (!select_list(p) || !take_kw(p, "FROM"))
			return 0;
		p->pos = after;
		next(p);
	}
	if (take_kw(p, "WHERE"))
		do {
			if (!condition(p))
				return 0;
		} while (take_kw(p, "AND"));
	if (take_kw(p, "GROUP") && (!take_kw(p, "BY") || !group_by(p)))
		return 0;
	if (take_kw(p, "ORDER") && (!take_kw(p, "BY") || !order_by(p)))
		return 0;
	if (take_kw(p, "LIMIT") && !limit(p))
		return 0;
	take_sym(p, ";");
	return p->t.t == T_END && items_resolve(s);
}

int qsqlshape_read(sqlite3 *db, const char *sql, struct qsqlshape *out)
{
	struct parse p;

	memset(out, 0, sizeof *out);
	memset(&p, 0, sizeof p);
	out->limit = -1;
	if (!(out->texts = malloc(strlen(sql) + 1)))
		return 0;
	p.db = db;
	p.s = sql;
	p.out = out;
	if (statement(&p))
		return 1;
	qsqlshape_free(out);
	return 0;
}

void qsqlshape_free(struct qsqlshape *s)
{
	free(s->texts);
	s->texts = NULL;
}
