/*
 * A random Oh-Seven / Oh Hell bot in C, written from PROTOCOL.md alone.
 *
 * It connects a ZeroMQ DEALER socket to $OHSEVEN_ENDPOINT, says hello with $OHSEVEN_SECRET,
 * and answers every request with a random legal move: a random element of "legal" for bids
 * and plays, the first "count" cards of "legal" (the hand) for passes. Events are ignored
 * (a real bot would fold them into its view of the game). It exits on "shutdown", on an
 * "error" from the referee, or after 5 minutes without any message.
 *
 * Build: make (needs libzmq and msgpack-c 4.x: cc c_bot.c -lzmq -lmsgpackc).
 */
#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define IDLE_MS (300 * 1000)
#define MAX_MESSAGE (64 * 1024)

/* The value of key `name` in the msgpack map `map`, or NULL. */
static const msgpack_object *lookup(const msgpack_object *map, const char *name) {
    size_t len = strlen(name);
    if (map->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *key = &map->via.map.ptr[i].key;
        if (key->type == MSGPACK_OBJECT_STR && key->via.str.size == len &&
            memcmp(key->via.str.ptr, name, len) == 0)
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

static int is_str(const msgpack_object *obj, const char *text) {
    size_t len = strlen(text);
    return obj && obj->type == MSGPACK_OBJECT_STR && obj->via.str.size == len &&
           memcmp(obj->via.str.ptr, text, len) == 0;
}

static void pack_cstr(msgpack_packer *pk, const char *text) {
    size_t len = strlen(text);
    msgpack_pack_str(pk, len);
    msgpack_pack_str_body(pk, text, len);
}

/* Pack a copy of a legal move (a card string or an integer bid). */
static void pack_move(msgpack_packer *pk, const msgpack_object *move) {
    if (move->type == MSGPACK_OBJECT_STR) {
        msgpack_pack_str(pk, move->via.str.size);
        msgpack_pack_str_body(pk, move->via.str.ptr, move->via.str.size);
    } else {
        msgpack_pack_object(pk, *move);
    }
}

static int send_buffer(void *sock, msgpack_sbuffer *buf) {
    return zmq_send(sock, buf->data, buf->size, 0) < 0 ? -1 : 0;
}

static int send_hello(void *sock, const char *secret) {
    msgpack_sbuffer buf;
    msgpack_packer pk;
    msgpack_sbuffer_init(&buf);
    msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    pack_cstr(&pk, "type");
    pack_cstr(&pk, "hello");
    pack_cstr(&pk, "protocol");
    msgpack_pack_int(&pk, 1);
    pack_cstr(&pk, "secret");
    pack_cstr(&pk, secret);
    pack_cstr(&pk, "bot");
    pack_cstr(&pk, "c_bot 1.0");
    int rc = send_buffer(sock, &buf);
    msgpack_sbuffer_destroy(&buf);
    return rc;
}

/* Answer a request: {"type": "move", "id": id, "move": ...}. */
static int answer(void *sock, const msgpack_object *request) {
    const msgpack_object *id = lookup(request, "id");
    const msgpack_object *kind = lookup(request, "kind");
    const msgpack_object *legal = lookup(request, "legal");
    const msgpack_object *count = lookup(request, "count");
    if (!id || !legal || legal->type != MSGPACK_OBJECT_ARRAY || legal->via.array.size == 0) {
        fprintf(stderr, "c_bot: a request without id or legal moves; ignored\n");
        return 0;
    }
    msgpack_sbuffer buf;
    msgpack_packer pk;
    msgpack_sbuffer_init(&buf);
    msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    pack_cstr(&pk, "type");
    pack_cstr(&pk, "move");
    pack_cstr(&pk, "id");
    msgpack_pack_object(&pk, *id);
    pack_cstr(&pk, "move");
    uint32_t size = legal->via.array.size;
    if (is_str(kind, "pass")) {
        uint32_t n = 0;
        if (count && count->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            n = (uint32_t)count->via.u64;
        if (n > size) n = size;
        msgpack_pack_array(&pk, n);
        for (uint32_t i = 0; i < n; i++) pack_move(&pk, &legal->via.array.ptr[i]);
    } else {
        pack_move(&pk, &legal->via.array.ptr[(uint32_t)rand() % size]);
    }
    int rc = send_buffer(sock, &buf);
    msgpack_sbuffer_destroy(&buf);
    return rc;
}

int main(void) {
    const char *endpoint = getenv("OHSEVEN_ENDPOINT");
    const char *secret = getenv("OHSEVEN_SECRET");
    if (!endpoint || !secret) {
        fprintf(stderr, "c_bot: OHSEVEN_ENDPOINT and OHSEVEN_SECRET must be set "
                        "(the referee starts this bot)\n");
        return 2;
    }
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    void *context = zmq_ctx_new();
    void *sock = zmq_socket(context, ZMQ_DEALER);
    int linger = 1000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, endpoint) != 0) {
        fprintf(stderr, "c_bot: cannot connect to %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
        return 1;
    }
    if (send_hello(sock, secret) != 0) {
        fprintf(stderr, "c_bot: cannot send hello: %s\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    static char data[MAX_MESSAGE];
    int status = 0;
    for (;;) {
        zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
        int ready = zmq_poll(&item, 1, IDLE_MS);
        if (ready < 0) { status = 1; break; }
        if (ready == 0) {
            fprintf(stderr, "c_bot: no message from the referee for 5 minutes; exiting\n");
            status = 1;
            break;
        }
        int size = zmq_recv(sock, data, sizeof data, 0);
        if (size < 0) { status = 1; break; }
        if (size > MAX_MESSAGE) {
            fprintf(stderr, "c_bot: message of %d bytes truncated; ignored\n", size);
            continue;
        }
        msgpack_unpacked message;
        msgpack_unpacked_init(&message);
        size_t offset = 0;
        if (msgpack_unpack_next(&message, data, (size_t)size, &offset) != MSGPACK_UNPACK_SUCCESS) {
            fprintf(stderr, "c_bot: undecodable message; ignored\n");
            msgpack_unpacked_destroy(&message);
            continue;
        }
        const msgpack_object *root = &message.data;
        const msgpack_object *type = lookup(root, "type");
        int stop = 0;
        if (is_str(type, "request")) {
            if (answer(sock, root) != 0) { status = 1; stop = 1; }
        } else if (is_str(type, "shutdown")) {
            stop = 1;
        } else if (is_str(type, "error")) {
            const msgpack_object *reason = lookup(root, "reason");
            if (reason && reason->type == MSGPACK_OBJECT_STR)
                fprintf(stderr, "c_bot: refused: %.*s\n", (int)reason->via.str.size,
                        reason->via.str.ptr);
            status = 1;
            stop = 1;
        }
        /* "welcome" and "events" need nothing from a random bot. */
        msgpack_unpacked_destroy(&message);
        if (stop) break;
    }
    zmq_close(sock);
    zmq_ctx_term(context);
    return status;
}
