package native

import "container/list"

// lru holds loaded images up to a total size in bytes, evicting the least
// recently used. It is not safe for concurrent use: the Resolver locks.
type lru struct {
	max, used int64
	order     *list.List // front: most recently used; values are *lruEntry
	byKey     map[string]*list.Element
}

type lruEntry struct {
	key  string
	img  *image
	size int64
}

func newLRU(maxBytes int64) *lru {
	return &lru{max: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *lru) get(key string) (*image, bool) {
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry).img, true
}

// add keeps img unless it alone exceeds the bound (it reports false then),
// evicting the least recently used images to make room.
func (c *lru) add(key string, img *image) bool {
	if img.size > c.max {
		return false
	}
	if el, ok := c.byKey[key]; ok {
		c.used -= el.Value.(*lruEntry).size
		c.order.Remove(el)
		delete(c.byKey, key)
	}
	for c.used+img.size > c.max {
		oldest := c.order.Back()
		e := oldest.Value.(*lruEntry)
		c.order.Remove(oldest)
		delete(c.byKey, e.key)
		c.used -= e.size
	}
	c.byKey[key] = c.order.PushFront(&lruEntry{key: key, img: img, size: img.size})
	c.used += img.size
	return true
}
