"""Conversations for ``hermes-fts demo``: written for this project, in four languages.

Each session is a dict with ``id``, ``source``, ``title``, ``model``, ``day``
(offset from ``DEMO_EPOCH`` in days), optional ``parent``/``end_reason``, and
``turns``: ``(role, text)`` pairs, ``("call", tool_name, arguments)`` for an
assistant tool call and ``("tool", tool_name, output)`` for its result.
``build_demo_store(path)`` writes them through ``SessionStore``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["DEMO_EPOCH", "DEMO_SEARCHES", "DEMO_SESSIONS", "build_demo_store"]

DEMO_EPOCH = 1767603600.0  # 2026-01-05 09:00 UTC
_TURN_GAP = 47.0  # seconds between turns

Turn = tuple[Any, ...]

# (query, what it shows) — run by ``hermes-fts demo`` in this order.
DEMO_SEARCHES: list[tuple[str, str]] = [
    ("部署", "Chinese two-character word"),
    ("猫", "single CJK character inside longer text"),
    ("設定ファイル", "Japanese word (katakana + kanji)"),
    ("백업", "Korean word"),
    ("migration", "English word"),
    ("deploy.sh", "identifier with punctuation"),
    ("nginx", "Latin glued to Chinese (修改nginx配置)"),
    ("备份 OR backup", "OR across scripts"),
]

_ZH_DEPLOY: list[Turn] = [
    ("user", "昨晚的部署又失败了，deploy.sh 跑到一半就退出，能帮我看看吗？"),
    ("assistant", "可以。先看一下脚本最后几行输出，我需要知道它停在哪一步。"),
    ("call", "terminal", {"command": "tail -n 20 logs/deploy-2026-01-04.log"}),
    (
        "tool",
        "terminal",
        "[deploy] pulling image registry.local/shop-api:1.8.2\n"
        "[deploy] stopping old container\n"
        "./deploy.sh: line 42: /srv/shop/.env: Permission denied\n"
        "[deploy] exit code 1",
    ),
    ("assistant", "问题在第 42 行：脚本读取 /srv/shop/.env 时没有权限。这个文件最近改过属主吗？"),
    ("user", "上周运维把 /srv 下的文件统一改成了 root 所有，可能是那次改的。"),
    (
        "assistant",
        "那就对上了。部署用户 deployer 不在 root 组里，所以读不到环境变量文件。"
        "两种修法：把 .env 的属组改成 deployer，或者让脚本用 sudo 读取。我建议前者，权限更小。",
    ),
    ("user", "好，用第一种。顺便把脚本改成失败时自动回滚到上一个镜像。"),
    ("call", "patch", {"path": "deploy.sh", "summary": "add rollback on failure"}),
    ("tool", "patch", "deploy.sh: 1 hunk applied (+14 -2)"),
    (
        "assistant",
        "已修改 deploy.sh：加了 trap，在任何一步失败时重新启动上一个镜像 shop-api:1.8.1，"
        "并把失败原因写进日志。",
    ),
    (
        "call",
        "terminal",
        {"command": "sudo chgrp deployer /srv/shop/.env && sudo chmod 640 /srv/shop/.env"},
    ),
    ("tool", "terminal", ""),
    ("user", "再部署一次试试。"),
    ("call", "terminal", {"command": "./deploy.sh shop-api 1.8.2"}),
    (
        "tool",
        "terminal",
        "[deploy] pulling image registry.local/shop-api:1.8.2\n[deploy] health check ok (3/3)\n"
        "[deploy] done in 41s",
    ),
    ("assistant", "部署成功，健康检查三次都通过，用时 41 秒。回滚逻辑这次没有触发。"),
    ("user", "太好了，谢谢！以后部署前能不能先检查一下文件权限？"),
    (
        "assistant",
        "可以在脚本开头加一个预检步骤：逐个检查需要读取的文件是否可读，不可读就直接报错退出，"
        "不会停掉旧容器。我已经把这个想法记在待办里了。",
    ),
]

_ZH_CAT: list[Turn] = [
    ("user", "我家的猫这两天不太吃东西，老是躲在床底下，要紧吗？"),
    (
        "assistant",
        "猫咪食欲下降加上躲藏，可能是身体不舒服，也可能是环境变化带来的压力。"
        "最近家里有没有搬家、来客人或者换猫粮？",
    ),
    ("user", "换了一种新的猫粮，大概一周前。"),
    (
        "assistant",
        "换粮太快很常见地会让猫肠胃不适。建议先把旧粮和新粮按三比一混合，慢慢过渡七到十天。"
        "如果超过 24 小时完全不吃，或者出现呕吐、精神很差，请尽快带去宠物医院。",
    ),
    ("user", "它还会喝水，精神也还行，就是吃得少。"),
    ("assistant", "那先观察，记录每天吃了多少克、喝水和上厕所的情况，这些数字对兽医很有用。"),
    ("user", "帮我做个简单的记录表吧。"),
    ("call", "write_file", {"path": "notes/cat-food-log.md", "chars": 412}),
    ("tool", "write_file", "wrote notes/cat-food-log.md (412 chars)"),
    (
        "assistant",
        "已经建好 notes/cat-food-log.md，列有日期、早晚饭克数、饮水、猫砂盆次数和备注。"
        "每天填一行就行。",
    ),
    ("user", "三天后：它现在又开始正常吃饭了，新旧粮混着吃没问题。"),
    ("assistant", "太好了！继续按比例过渡，下周就可以完全换成新粮。记录表可以再保留一周。"),
    ("user", "顺便问一下，猫能吃一点点煮熟的鸡胸肉吗？"),
    (
        "assistant",
        "少量白水煮熟、不加盐和调料的鸡胸肉一般没问题，可以当零食，但不要超过每天食量的一成，"
        "也不要给带骨头的。",
    ),
]

_ZH_TRIP: list[Turn] = [
    ("user", "五一想去桂林玩四天，帮我排个行程，预算人均三千左右。"),
    (
        "assistant",
        "可以这样安排：第一天到桂林市区，逛象鼻山和两江四湖夜景；第二天坐船游漓江到阳朔；"
        "第三天在阳朔骑行遇龙河；第四天上午看银子岩，下午返程。",
    ),
    ("user", "漓江的船票要提前多久买？"),
    (
        "assistant",
        "假期通常提前两到三周就紧张了，建议一确定日期就在官方渠道预订，记得带身份证原件。",
    ),
    ("user", "住宿呢？阳朔住西街附近会不会太吵？"),
    (
        "assistant",
        "西街晚上确实热闹到很晚。想安静可以住遇龙河边的民宿，骑车十五分钟到西街，价格也差不多。",
    ),
    ("user", "好，那第二晚和第三晚住遇龙河。帮我算一下大概花费。"),
    ("call", "execute_code", {"language": "python", "chars": 380}),
    ("tool", "execute_code", "交通 900 / 住宿 1050 / 门票与船票 520 / 餐饮 480 / 合计 2950"),
    ("assistant", "估算人均 2950 元：交通 900、住宿 1050、门票和船票 520、餐饮 480，在预算之内。"),
    ("user", "把行程存成一个清单，出发前提醒我带身份证和充电宝。"),
    ("assistant", "已记下：出发前一天提醒你带身份证、充电宝、雨具，以及打印好的船票订单号。"),
]

_JA_CONFIG: list[Turn] = [
    ("user", "古い設定ファイルを INI から YAML に移行したいです。どこから始めればいいですか？"),
    (
        "assistant",
        "まず今の設定ファイルの全項目を一覧にしましょう。セクションごとにキーと型を洗い出してから、"
        "YAML の構造を決めるのが安全です。",
    ),
    ("call", "read_file", {"path": "config/app.ini"}),
    (
        "tool",
        "read_file",
        "[server]\nport = 8080\nworkers = 4\n[database]\nurl = postgres://app@db/app\n"
        "pool_size = 10\n[log]\nlevel = info",
    ),
    (
        "assistant",
        "セクションは server、database、log の三つです。port と workers と pool_size は整数、"
        "それ以外は文字列として扱います。",
    ),
    ("user", "環境ごとに値を上書きできるようにしたいです。"),
    (
        "assistant",
        "base.yaml に共通の値を置き、"
        "production.yaml と staging.yaml で差分だけ書く形がおすすめです。"
        "読み込み時に深いマージをします。",
    ),
    ("user", "移行スクリプトも書いてもらえますか？"),
    ("call", "write_file", {"path": "tools/ini_to_yaml.py", "chars": 1630}),
    ("tool", "write_file", "wrote tools/ini_to_yaml.py (1630 chars)"),
    (
        "call",
        "terminal",
        {"command": "python tools/ini_to_yaml.py config/app.ini > config/base.yaml"},
    ),
    ("tool", "terminal", "converted 3 sections, 6 keys"),
    ("assistant", "変換できました。三つのセクションと六つのキーが base.yaml に入っています。"),
    ("user", "古い INI はいつ消していいですか？"),
    (
        "assistant",
        "新しい設定ファイルで一週間ほど問題なく動いてから削除するのが無難です。"
        "それまではアプリが YAML を優先して読むようにしておきましょう。",
    ),
]

_JA_TOKYO: list[Turn] = [
    ("user", "来月、東京タワーと浅草に行く予定です。半日で回れますか？"),
    (
        "assistant",
        "半日なら可能です。午前に浅草寺と仲見世通りを歩き、昼ごはんのあと地下鉄で移動して、"
        "夕方に東京タワーの展望台から夕焼けを見る流れがおすすめです。",
    ),
    ("user", "写真をたくさん撮りたいので、混雑しない時間はありますか？"),
    (
        "assistant",
        "浅草寺は朝八時前なら人がかなり少ないです。東京タワーは平日の夕方が比較的すいています。",
    ),
    ("user", "旅行のあと、写真をフォルダーに整理するのを手伝ってください。"),
    ("call", "terminal", {"command": "ls ~/Pictures/tokyo | head"}),
    ("tool", "terminal", "IMG_2031.JPG\nIMG_2032.JPG\nIMG_2033.JPG\nIMG_2040.HEIC\nIMG_2041.HEIC"),
    (
        "assistant",
        "撮影日時で「浅草」「東京タワー」「その他」の三つのフォルダーに分けるスクリプトを用意しました。"
        "HEIC も JPG と同じように扱います。",
    ),
    ("user", "ありがとう。猫カフェにも寄りたいんだけど、近くにありますか？"),
    (
        "assistant",
        "浅草駅の周辺にいくつかあります。予約制の店が多いので、前日までに確認してください。",
    ),
]

_KO_BACKUP: list[Turn] = [
    ("user", "데이터베이스 백업을 매일 자동으로 하고 싶어요. 어떻게 하면 좋을까요?"),
    (
        "assistant",
        "가장 간단한 방법은 매일 새벽에 pg_dump 를 실행하는 크론 작업을 만드는 것입니다. "
        "백업 파일은 날짜를 붙여 저장하고, 오래된 파일은 14일이 지나면 지우도록 하죠.",
    ),
    ("user", "백업 파일을 다른 서버에도 복사해야 하나요?"),
    (
        "assistant",
        "네, 같은 서버에만 두면 디스크가 고장 났을 때 백업도 함께 사라집니다. "
        "rsync 로 별도 저장소에 복사하는 단계를 추가하는 것을 권합니다.",
    ),
    ("call", "write_file", {"path": "ops/backup.sh", "chars": 920}),
    ("tool", "write_file", "wrote ops/backup.sh (920 chars)"),
    ("call", "terminal", {"command": "bash ops/backup.sh --dry-run"}),
    (
        "tool",
        "terminal",
        "dump: shop_2026-01-09.sql.gz (dry run)\nrsync: backup@vault:/backups/shop/ (dry run)\n"
        "prune: 0 files older than 14 days",
    ),
    (
        "assistant",
        "드라이런 결과는 정상입니다. "
        "덤프, 원격 복사, 오래된 파일 정리까지 세 단계 모두 확인했습니다.",
    ),
    ("user", "복구 테스트는 어떻게 해요?"),
    (
        "assistant",
        "한 달에 한 번 임시 데이터베이스를 만들어 최신 백업을 복원해 보고, 주요 테이블의 행 수를 "
        "비교하면 됩니다. 복원이 안 되는 백업은 백업이 아니니까요.",
    ),
    ("user", "좋아요, 복구 테스트도 일정에 넣어 주세요."),
    ("assistant", "매월 첫째 주 월요일 오전에 복구 테스트를 하도록 일정에 추가했습니다."),
]

_KO_RECIPE: list[Turn] = [
    ("user", "김치찌개를 처음 끓여 보는데 재료를 알려 주세요."),
    (
        "assistant",
        "잘 익은 김치 두 컵, 돼지고기 앞다리살 200그램, "
        "두부 반 모, 대파, 양파, 고춧가루 한 숟가락, "
        "그리고 김치 국물이 있으면 충분합니다.",
    ),
    ("user", "돼지고기 대신 참치를 넣어도 되나요?"),
    ("assistant", "물론입니다. 참치는 마지막에 넣어서 오 분 정도만 끓이면 살이 부서지지 않아요."),
    ("user", "맵기를 줄이려면요?"),
    (
        "assistant",
        "고춧가루를 빼고 김치를 한 번 물에 헹구면 훨씬 순해집니다. 설탕을 조금 넣어도 좋아요.",
    ),
    ("user", "오늘 저녁에 해 볼게요. 고마워요!"),
    ("assistant", "맛있게 드세요! 남은 찌개는 다음 날 다시 끓이면 더 맛있답니다."),
]

_EN_MIGRATION_1: list[Turn] = [
    ("user", "We need to move the orders table to the new Postgres cluster without downtime."),
    (
        "assistant",
        "Plan: add logical replication from the old cluster, let it catch up, switch reads, "
        "then switch writes during a short maintenance window. The migration of the schema comes "
        "first, data follows through replication.",
    ),
    ("user", "How long could the write switch take?"),
    (
        "assistant",
        "Usually under a minute: stop the writers, wait for replication lag to reach zero, bump "
        "the sequences on the new side, point the connection string at the new cluster.",
    ),
    (
        "call",
        "terminal",
        {"command": "psql -c \"select pg_size_pretty(pg_total_relation_size('orders'))\""},
    ),
    ("tool", "terminal", " pg_size_pretty\n----------------\n 38 GB\n(1 row)"),
    (
        "assistant",
        "The orders table is 38 GB, so the initial copy will take a few hours. Fine overnight.",
    ),
    ("user", "Write the migration checklist into docs/orders-migration.md."),
    ("call", "write_file", {"path": "docs/orders-migration.md", "chars": 2210}),
    ("tool", "write_file", "wrote docs/orders-migration.md (2210 chars)"),
    (
        "assistant",
        "Checklist written: prerequisites, publication and subscription setup, lag monitoring, "
        "sequence bump, cut-over, rollback.",
    ),
    ("user", "Start the replication tonight, I will check the lag tomorrow morning."),
]

_EN_MIGRATION_2: list[Turn] = [
    (
        "user",
        "[CONTEXT COMPACTION] Earlier in this conversation: planned a zero-downtime migration of "
        "the 38 GB orders table to the new Postgres cluster via logical replication; checklist in "
        "docs/orders-migration.md; replication started overnight.",
    ),
    ("user", "Morning. Replication lag is at zero. Are we ready for the cut-over?"),
    (
        "assistant",
        "Almost. Two checks first: row counts on both sides, and that the sequences on the new "
        "cluster are ahead of the old maximum ids.",
    ),
    ("call", "terminal", {"command": "./scripts/compare_counts.sh orders"}),
    ("tool", "terminal", "old: 51,240,118 rows\nnew: 51,240,118 rows\nmatch"),
    ("assistant", "Row counts match. Bumping sequences now, then we can switch writes."),
    ("call", "terminal", {"command": "psql -h new-db -f sql/bump_sequences.sql"}),
    ("tool", "terminal", "setval\n--------\n 51240500\n(1 row)"),
    ("user", "Go ahead with the switch."),
    (
        "assistant",
        "Writers stopped, connection string updated, writers restarted. Cut-over took 38 seconds.",
    ),
    ("user", "Great. Keep the old cluster read-only for a week before we drop it."),
    (
        "assistant",
        "Noted: the old cluster stays read-only until next Monday, "
        "then we drop it after a final backup.",
    ),
]

_EN_RUST: list[Turn] = [
    ("user", "The Rust CLI tests are flaky on CI, about one run in ten fails."),
    ("assistant", "Which test fails, and is it always the same one?"),
    ("user", "Usually test_parallel_download, with a timeout."),
    (
        "assistant",
        "That test starts a local HTTP server on a fixed port. Two test binaries running in "
        "parallel can race for the port. Binding to port 0 and reading the assigned port back "
        "removes the race.",
    ),
    ("call", "patch", {"path": "tests/download.rs", "summary": "bind test server to port 0"}),
    ("tool", "patch", "tests/download.rs: 2 hunks applied (+9 -4)"),
    ("call", "terminal", {"command": "cargo test --release -- --test-threads=8"}),
    ("tool", "terminal", "test result: ok. 64 passed; 0 failed; 0 ignored; finished in 12.31s"),
    ("assistant", "All 64 tests pass. I ran the suite 30 times in a loop with no failure."),
    ("user", "Nice. Also, can we get rid of the unwrap calls in the config loader?"),
    (
        "assistant",
        "Yes: the loader now returns a ConfigError with the file path and line, and main prints "
        "it and exits with status 2 instead of panicking.",
    ),
]

_MIXED_NGINX: list[Turn] = [
    ("user", "帮我修改nginx配置，把http全部跳转到https。"),
    ("assistant", "好的。先看一下现在的站点配置文件，我需要知道 server 块是怎么写的。"),
    ("call", "read_file", {"path": "/etc/nginx/sites-enabled/shop.conf"}),
    (
        "tool",
        "read_file",
        "server {\n    listen 80;\n    server_name shop.example.com;\n"
        "    root /srv/shop/public;\n}",
    ),
    (
        "assistant",
        "现在只监听 80 端口。我会加一个只做 301 跳转的 server 块，"
        "再把原来的内容挪到 listen 443 ssl 下面，"
        "证书用 certbot 签的那一对。",
    ),
    (
        "call",
        "patch",
        {"path": "/etc/nginx/sites-enabled/shop.conf", "summary": "redirect to https"},
    ),
    ("tool", "patch", "shop.conf: 1 hunk applied (+12 -1)"),
    ("call", "terminal", {"command": "sudo nginx -t && sudo systemctl reload nginx"}),
    ("tool", "terminal", "nginx: configuration file /etc/nginx/nginx.conf test is successful"),
    ("assistant", "配置检查通过并已重新加载。现在访问 http://shop.example.com 会 301 跳到 https。"),
    ("user", "顺便开启HSTS吧，max-age先设一天。"),
    ("assistant", "已加上 Strict-Transport-Security 头，max-age=86400。确认没问题后再逐步调大。"),
]

_MIXED_REACT: list[Turn] = [
    ("user", "React のコンポーネントで useEffect が二回呼ばれるのはなぜですか？"),
    (
        "assistant",
        "開発モードの StrictMode では、副作用の後片付け漏れを見つけるために、"
        "マウント直後に一度アンマウントして"
        "もう一度マウントします。本番ビルドでは一回だけです。",
    ),
    ("user", "fetch が二回飛ぶのが気になります。"),
    (
        "assistant",
        "AbortController を使って、クリーンアップで前のリクエストを中断しましょう。"
        "またはデータ取得をライブラリに任せると重複を自動でまとめてくれます。",
    ),
    (
        "call",
        "patch",
        {"path": "src/components/OrderList.tsx", "summary": "abort fetch on cleanup"},
    ),
    ("tool", "patch", "OrderList.tsx: 1 hunk applied (+7 -2)"),
    (
        "assistant",
        "OrderList.tsx を直しました。開発モードでも表示されるリクエストは実質一回になります。",
    ),
    ("user", "ありがとう、deploy は明日やります。"),
]

_SUBAGENT: list[Turn] = [
    ("user", "Summarise the deploy logs from last week and list every failed 部署 step."),
    ("assistant", "Two failures: a permission error on Monday and a registry timeout on Thursday."),
]


def _cron_runs() -> list[Turn]:
    turns: list[Turn] = []
    for day in range(1, 25):
        size = 400 + 3 * day + (day * 7) % 5
        turns.append(
            ("user", f"[定时任务] 每日数据库备份 第{day}次 / nightly database backup run {day}")
        )
        turns.append(("call", "terminal", {"command": "bash ops/backup.sh"}))
        turns.append(
            ("tool", "terminal", f"dump ok: shop.sql.gz {size} MB\nrsync ok\nprune: 1 file")
        )
        turns.append(
            (
                "assistant",
                f"备份完成：{size} MB，已同步到远端。Backup finished, {size} MB, copied off-site.",
            )
        )
    return turns


DEMO_SESSIONS: list[dict[str, Any]] = [
    {
        "id": "20260105_091200_a1f3c2",
        "source": "cli",
        "title": "部署脚本权限问题",
        "model": "qwen3-coder",
        "day": 0,
        "turns": _ZH_DEPLOY,
    },
    {
        "id": "20260106_203015_b27d90",
        "source": "telegram",
        "title": "猫咪换粮",
        "model": "kimi-k2",
        "day": 1,
        "turns": _ZH_CAT,
    },
    {
        "id": "20260108_120510_c3e811",
        "source": "telegram",
        "title": "桂林四日行程",
        "model": "kimi-k2",
        "day": 3,
        "turns": _ZH_TRIP,
    },
    {
        "id": "20260109_101045_d48a07",
        "source": "cli",
        "title": "設定ファイルの YAML 移行",
        "model": "claude-sonnet-4",
        "day": 4,
        "turns": _JA_CONFIG,
    },
    {
        "id": "20260110_183320_e5b6f4",
        "source": "telegram",
        "title": "東京タワーと浅草",
        "model": "claude-sonnet-4",
        "day": 5,
        "turns": _JA_TOKYO,
    },
    {
        "id": "20260111_074500_f6c2d9",
        "source": "cli",
        "title": "데이터베이스 백업 자동화",
        "model": "gpt-4.1",
        "day": 6,
        "turns": _KO_BACKUP,
    },
    {
        "id": "20260112_191210_07d3ea",
        "source": "telegram",
        "title": "김치찌개 레시피",
        "model": "gpt-4.1",
        "day": 7,
        "turns": _KO_RECIPE,
    },
    {
        "id": "20260113_150000_18e4fb",
        "source": "cli",
        "title": "Orders table migration",
        "model": "claude-sonnet-4",
        "day": 8,
        "turns": _EN_MIGRATION_1,
        "end_reason": "compression",
    },
    {
        "id": "20260114_083015_29f50c",
        "source": "cli",
        "title": "Orders table migration #2",
        "model": "claude-sonnet-4",
        "day": 9,
        "turns": _EN_MIGRATION_2,
        "parent": "20260113_150000_18e4fb",
    },
    {
        "id": "20260115_110530_3a061d",
        "source": "cli",
        "title": "Flaky Rust CLI tests",
        "model": "deepseek-v3",
        "day": 10,
        "turns": _EN_RUST,
    },
    {
        "id": "20260116_214500_4b172e",
        "source": "cli",
        "title": "nginx https 跳转",
        "model": "glm-4.6",
        "day": 11,
        "turns": _MIXED_NGINX,
    },
    {
        "id": "20260117_130045_5c283f",
        "source": "cli",
        "title": "React useEffect 二回問題",
        "model": "claude-sonnet-4",
        "day": 12,
        "turns": _MIXED_REACT,
    },
    {
        "id": "20260107_020000_6d3940",
        "source": "cron",
        "title": "每日数据库备份 / nightly backup",
        "model": "gpt-4.1",
        "day": 2,
        "turns": _cron_runs(),
    },
    {
        "id": "20260118_090000_7e4a51",
        "source": "subagent",
        "title": None,
        "model": "qwen3-coder",
        "day": 13,
        "turns": _SUBAGENT,
        "parent": "20260105_091200_a1f3c2",
    },
]


def _messages(session: dict[str, Any], start: float) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pending_call: str | None = None
    for number, turn in enumerate(session["turns"]):
        ts = start + number * _TURN_GAP
        kind = turn[0]
        if kind == "call":
            call_id = f"call_{session['id'][-6:]}_{number}"
            pending_call = call_id
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": turn[1], "arguments": json.dumps(turn[2], ensure_ascii=False)},
            }
            out.append(
                {"role": "assistant", "content": None, "tool_calls": [call], "timestamp": ts}
            )
        elif kind == "tool":
            out.append(
                {
                    "role": "tool",
                    "content": turn[2],
                    "tool_name": turn[1],
                    "tool_call_id": pending_call,
                    "timestamp": ts,
                }
            )
        else:
            out.append({"role": kind, "content": turn[1], "timestamp": ts})
    return out


def build_demo_store(path: str | Path) -> Any:
    """Create a new store at ``path`` holding ``DEMO_SESSIONS``; returns the open store."""
    from .store import SessionStore

    store = SessionStore(path)
    for session in DEMO_SESSIONS:
        start = DEMO_EPOCH + session["day"] * 86400.0
        messages = _messages(session, start)
        fields: dict[str, Any] = {"model": session["model"], "title": session["title"]}
        if session.get("parent"):
            fields["parent_session_id"] = session["parent"]
        if session["source"] == "subagent":
            fields["model_config"] = json.dumps({"_delegate_from": session["parent"]})
        store.add_session(session["id"], session["source"], started_at=start, **fields)
        store.add_messages([{"session_id": session["id"], **m} for m in messages])
        if session.get("end_reason"):
            store.end_session(session["id"], session["end_reason"])
    store.sync()
    return store
