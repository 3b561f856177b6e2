import { MyDeals } from '../../_components/my-deals';

/** "Мои сделки" (an investor's deals; for another role deal.list answers its own scope). */
export default function DealsPage() {
  return <MyDeals />;
}
